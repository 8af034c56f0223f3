// Signoff verifier probe, assertion semantics 6.
//
// It runs in an isolated world the verifier creates over CDP (Page.createIsolatedWorld), so the
// app's scripts cannot redefine the getters it reads: a page that patches
// Element.prototype.scrollWidth or getBoundingClientRect in its own world changes nothing here.
// The verifier calls it as (probe)(request, ...shadowRoots) with Runtime.callFunctionOn. The
// shadow roots, open and closed, come from CDP (DOM.getDocument with pierce), since a closed
// root cannot be reached from script; every read walks the composed tree through them.
// request.op says what to do:
//
//   install  start counting DOM mutations in the document and in every shadow root
//   poll     the page clock, the quiet clock and a layout signature (cheap; no assertion)
//   read     measure request.reads, plus the signature
//   scroll   scroll the viewport to request.to ("bottom", or a vertical offset), as a person's
//            swipe would; answers where it was before
//   spot     a point of the viewport on nothing a person would tap on purpose (no link,
//            control, label or text), for the verifier's tap; null when there is none
//   covers   for each shown text, how many of its spots (text.N.spots of a read) something
//            else paints over, given what the browser's hit test found there (request.hits
//            handles after the shadow roots)
//
// This file and params.json are hashed into the verifier digest: a change to either makes
// contracts frozen under the old semantics fail verification instead of being judged by new
// rules. Keep it deterministic and free of side effects on the page.
(request, ...args) => {
  // A covers request's last request.hits arguments are what the browser hit at its spots.
  const hits = request.hits ? args.slice(args.length - request.hits) : [];
  const shadowRoots = request.hits ? args.slice(0, args.length - request.hits) : args;
  const P = request.params;
  const doc = document;
  const root = doc.documentElement;
  const body = doc.body;
  const roots = [doc, ...shadowRoots.filter((r) => r && r.host && r.host.isConnected)];
  const hostRoot = new Map(roots.slice(1).map((r) => [r.host, r]));
  // Same-origin frame documents (srcdoc included) are part of the page a person sees: their
  // elements count for structure. A cross-origin frame cannot be read here; origin pinning
  // fails a page that has one.
  const frameDocs = () => {
    const out = [];
    for (const r of roots) {
      for (const f of r.querySelectorAll('iframe, frame')) {
        let d = null;
        try {
          d = f.contentDocument;
        } catch (e) {
          d = null;
        }
        if (d && d.documentElement) out.push({ frame: f, doc: d });
      }
    }
    return out;
  };

  // The quiet clock: the page time of the last DOM mutation anywhere in the composed tree.
  const observe = () => {
    let q = globalThis.__signoffQuiet;
    if (!q) {
      q = { last: performance.now(), mutations: 0, seen: new WeakSet() };
      q.observer = new MutationObserver((records) => {
        q.last = performance.now();
        q.mutations += records.length;
      });
      globalThis.__signoffQuiet = q;
    }
    for (const r of roots) {
      if (q.seen.has(r)) continue;
      q.seen.add(r);
      q.observer.observe(r, { subtree: true, childList: true, attributes: true, characterData: true });
    }
    return q;
  };

  const everyElement = () => roots.flatMap((r) => [...r.querySelectorAll('*')]);
  // The layout signature a poll compares: the document's own, as a poll is not handed the
  // shadow roots (their mutations are counted by the quiet clock instead).
  const signature = () => ({
    scroll_width: root.scrollWidth,
    scroll_height: root.scrollHeight,
    inner_width: window.innerWidth,
    inner_height: window.innerHeight,
    elements: doc.getElementsByTagName('*').length,
  });

  if (request.op === 'install') {
    observe();
    return { installed: true };
  }
  if (request.op === 'poll') {
    const q = observe();
    return { now: performance.now(), quiet_ms: performance.now() - q.last, mutations: q.mutations, signature: signature() };
  }

  if (request.op === 'scroll') {
    const se = doc.scrollingElement || root;
    const before = window.scrollY;
    window.scrollTo(window.scrollX, request.to === 'bottom' ? se.scrollHeight : Number(request.to) || 0);
    return { now: performance.now(), before, scroll_y: window.scrollY };
  }
  if (request.op === 'spot') {
    const ACTIVE = 'a, button, input, select, textarea, label, summary, details, video, audio, iframe, [role], [tabindex], [onclick], [contenteditable]';
    const empty = (x, y) => {
      const el = doc.elementFromPoint(x, y);
      if (!el) return false;
      if (el.closest(ACTIVE)) return false;
      for (const n of el.childNodes) if (n.nodeType === 3 && /\S/.test(n.data)) return false;
      return true;
    };
    const w = window.innerWidth;
    const h = window.innerHeight;
    for (let gy = 0.95; gy > 0.04; gy -= 0.1) {
      for (let gx = 0.05; gx < 1; gx += 0.15) {
        const x = Math.round(w * gx);
        const y = Math.round(h * gy);
        if (empty(x, y)) return { now: performance.now(), spot: { x, y } };
      }
    }
    return { now: performance.now(), spot: null };
  }

  // A phone's innerWidth grows with content wider than the page declared (a 900 px table makes it
  // 908) while the screen still shows the device width: on a phone the viewport is the visual
  // viewport's width, which is the device width for a device-width page and the laid-out width
  // (980) for a page that declares none.
  const iw = request.phone && window.visualViewport ? window.visualViewport.width : window.innerWidth;
  const ih = window.innerHeight;
  const sx = window.scrollX;
  const sy = window.scrollY;
  const tol = P.edge_tolerance_px;
  const minPx = P.min_visible_px;
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE']);
  const EVERYWHERE = { l: -Infinity, t: -Infinity, r: Infinity, b: Infinity };

  // The flat-tree parent: the slot a node is assigned to, else its parent, else (at the top
  // of a shadow tree) the host. Layout, clipping and opacity follow this tree.
  const up = (n) => {
    if (n.assignedSlot) return n.assignedSlot;
    if (n.parentElement) return n.parentElement;
    const p = n.parentNode;
    return p && p.nodeType === 11 && p.host ? p.host : null;
  };
  // Whether n is anc or in it, in the flat tree.
  const inside = (n, anc) => {
    for (let a = n; a; a = up(a)) if (a === anc) return true;
    return false;
  };
  // The flat-tree children: a host's shadow tree, a slot's assigned nodes (or its fallback).
  const flatChildren = (n) => {
    if (n.nodeType !== 1) return [];
    const sr = hostRoot.get(n);
    if (sr) return [...sr.childNodes];
    if (n.tagName === 'SLOT' && n.getRootNode().nodeType === 11) {
      const assigned = n.assignedNodes();
      if (assigned.length) return assigned;
    }
    return [...n.childNodes];
  };

  const styles = new Map();
  const style = (el) => {
    let s = styles.get(el);
    if (s === undefined) {
      s = getComputedStyle(el);
      styles.set(el, s);
    }
    return s;
  };

  // Rectangles are in document coordinates: {l, t, r, b}.
  const docRect = (r) => ({ l: r.left + sx, t: r.top + sy, r: r.right + sx, b: r.bottom + sy });
  const intersect = (a, b) => (b ? { l: Math.max(a.l, b.l), t: Math.max(a.t, b.t), r: Math.min(a.r, b.r), b: Math.min(a.b, b.b) } : a);
  const width = (r) => r.r - r.l;
  const height = (r) => r.b - r.t;
  const round = (n, d) => Math.round(n * d) / d;
  const boxOf = (r) => ({ x: round(r.l, 10), y: round(r.t, 10), width: round(width(r), 10), height: round(height(r), 10) });

  // The viewport's horizontal overflow comes from html, or from body when html's is visible.
  const viewportOverflow = (axis) => {
    const h = style(root)[axis];
    if (h !== 'visible') return h;
    return body ? style(body)[axis] : 'visible';
  };
  const rootScrollsY = !['hidden', 'clip'].includes(viewportOverflow('overflowY'));
  const rootScrollsX = !['hidden', 'clip'].includes(viewportOverflow('overflowX'));

  // Opacity 0 on an element or any flat-tree ancestor hides it from a person.
  const faded = new Map();
  const transparent = (el) => {
    if (!el) return false;
    let v = faded.get(el);
    if (v === undefined) {
      v = style(el).opacity === '0' || transparent(up(el));
      faded.set(el, v);
    }
    return v;
  };

  // What the browser renders at all: laid out in the flat tree, not display none, not
  // visibility hidden, not opacity 0, not inside a content-visibility: hidden subtree (whose
  // contents are never painted). content-visibility: auto is not skipping: it paints on scroll.
  const rendered = (el) =>
    el.isConnected && !SKIP.has(el.tagName) && el.getClientRects().length > 0 &&
    el.checkVisibility({ opacityProperty: true, visibilityProperty: true }) &&
    style(el).visibility === 'visible' && !transparent(el);

  // The region an element's own `clip` (absolutely positioned only) and `clip-path` leave.
  const ownClip = (el, s, box) => {
    let c = null;
    if (s.clip && s.clip !== 'auto' && (s.position === 'absolute' || s.position === 'fixed')) {
      const m = s.clip.match(/rect\(([^)]*)\)/);
      if (m) {
        const v = m[1].split(/[\s,]+/).filter(Boolean).map((x) => (x === 'auto' ? null : parseFloat(x)));
        c = {
          t: box.t + (v[0] ?? 0),
          r: v[1] == null ? box.r : box.l + v[1],
          b: v[2] == null ? box.b : box.t + v[2],
          l: box.l + (v[3] ?? 0),
        };
      }
    }
    if (s.clipPath && s.clipPath !== 'none') {
      // Any clip-path is treated as clipping to the border box; inset() is applied.
      let cp = box;
      const m = s.clipPath.match(/^inset\(([^)]*)\)/);
      if (m) {
        const parts = m[1].split(/\s+round\s+/)[0].trim().split(/\s+/);
        const len = (x, total) => (x.endsWith('%') ? (parseFloat(x) / 100) * total : parseFloat(x) || 0);
        const [t, r = t, b = t, l = r] = parts;
        const w = width(box);
        const h = height(box);
        cp = { t: box.t + len(t, h), r: box.r - len(r, w), b: box.b - len(b, h), l: box.l + len(l, w) };
      }
      c = c ? intersect(c, cp) : cp;
    }
    return c;
  };

  // Whether a style makes an element the containing block of fixed (and absolute) descendants.
  const makesBlock = (s) =>
    s.transform !== 'none' || s.perspective !== 'none' || s.filter !== 'none' ||
    /paint|layout|strict|content/.test(s.contain) || /transform|perspective|filter/.test(s.willChange);

  // Walks the flat-tree ancestors that can clip el (its containing-block chain, html and body
  // excluded: the viewport is judged directly). With fromSelf, el itself is the first clipper
  // (for its text). Returns the region left visible (null: unclipped), whether a scroll
  // container (overflow auto/scroll) holds el on each axis (such content is reachable by
  // scrolling it) and the nearest horizontal one.
  const chain = (el, fromSelf) => {
    let clip = null;
    let scrollX = false;
    let scrollY = false;
    let ellipsis = null; // text-overflow of the nearest ancestor that clips horizontally
    let scroller = null; // the nearest horizontal scroll container
    let pos = fromSelf ? 'static' : style(el).position;
    for (let a = fromSelf ? el : up(el); a && a !== root && a !== body; a = up(a)) {
      const s = style(a);
      if (pos === 'fixed' && !makesBlock(s)) continue;
      if (pos === 'absolute' && s.position === 'static' && !makesBlock(s)) continue;
      const box = docRect(a.getBoundingClientRect());
      const own = ownClip(a, s, box);
      if (own) clip = intersect(clip || EVERYWHERE, own);
      if (s.display !== 'inline' && s.display !== 'contents') {
        const ox = s.overflowX;
        const oy = s.overflowY;
        if ((ox === 'auto' || ox === 'scroll') && !scrollX) {
          scrollX = true;
          scroller = a;
        }
        if (oy === 'auto' || oy === 'scroll') scrollY = true;
        const cx = ox === 'hidden' || ox === 'clip';
        const cy = oy === 'hidden' || oy === 'clip';
        if (cx && ellipsis === null) ellipsis = s.textOverflow === 'ellipsis';
        if (cx || cy) {
          const pl = box.l + a.clientLeft;
          const pt = box.t + a.clientTop;
          clip = intersect(clip || EVERYWHERE, {
            l: cx ? pl : -Infinity,
            r: cx ? pl + a.clientWidth : Infinity,
            t: cy ? pt : -Infinity,
            b: cy ? pt + a.clientHeight : Infinity,
          });
        }
      }
      pos = s.position;
    }
    return { clip, scrollX, scrollY, scroller, ellipsis: ellipsis === true };
  };

  // Whether a visible region is where a person sees it: of non-zero size, horizontally inside
  // the viewport (content a person must scroll sideways to reach is not shown), and not above
  // the document or below a page that cannot scroll down.
  const onScreen = (v) =>
    width(v) > minPx && height(v) > minPx && v.r > sx && v.l < sx + iw && v.b > 0 && (rootScrollsY || v.t < sy + ih);

  const union = (a, b) => (a ? { l: Math.min(a.l, b.l), t: Math.min(a.t, b.t), r: Math.max(a.r, b.r), b: Math.max(a.b, b.b) } : b);
  // A box-less element (display: contents, a common React wrapper) has no box of its own: it is
  // judged by its flat-tree children's.
  const boxless = (el) => el.isConnected && !SKIP.has(el.tagName) && style(el).display === 'contents';
  const childRects = (el, each) => {
    let u = null;
    for (const c of flatChildren(el)) {
      if (c.nodeType === 1) {
        const v = each(c);
        if (v) u = union(u, v);
      } else if (c.nodeType === 3 && /\S/.test(c.data) && textShown(c)) {
        range.selectNodeContents(c);
        u = union(u, docRect(range.getBoundingClientRect()));
      }
    }
    return u;
  };
  // An element's border box in document coordinates (its children's union when box-less).
  const elRect = (el) => (boxless(el) ? childRects(el, elRect) || { l: 0, t: 0, r: 0, b: 0 } : docRect(el.getBoundingClientRect()));

  // The part of el a person can see, or null: rendered, not clipped away by overflow
  // hidden/clip, clip or clip-path (1px visually-hidden content is not visible), and on screen.
  const visibleRect = (el) => {
    if (boxless(el)) return transparent(el) ? null : childRects(el, visibleRect);
    if (!rendered(el)) return null;
    const box = docRect(el.getBoundingClientRect());
    let v = box;
    const own = ownClip(el, style(el), box);
    if (own) v = intersect(v, own);
    const ch = chain(el, false);
    if (ch.clip) v = intersect(v, ch.clip);
    return onScreen(v) ? v : null;
  };

  // The alpha of a computed color ("rgb(…)", "rgba(…)", "color(srgb … / a)", "transparent").
  const alpha = (c) => {
    if (!c || c === 'transparent') return 0;
    const slash = c.match(/\/\s*([\d.]+%?)\s*\)$/);
    if (slash) return slash[1].endsWith('%') ? parseFloat(slash[1]) / 100 : parseFloat(slash[1]);
    const m = c.match(/^rgba\(([^)]*)\)$/);
    if (m) return parseFloat(m[1].split(',')[3]);
    return 1;
  };

  // The element that lays out a text node: its flat-tree parent, or the nearest ancestor with
  // a box when that parent is display: contents.
  const textOwner = (n) => {
    let p = up(n);
    while (p && p.nodeType === 1 && style(p).display === 'contents') p = up(p);
    return p && p.nodeType === 1 ? p : null;
  };

  // How an element's paint reaches the screen through its flat tree: the product of its and
  // its ancestors' opacity (filter: opacity() included) and the sum of their filter: blur()
  // radii. Kept per element for the read; found walking up, not by recursion (a deep tree).
  // The opacity() and blur() functions of a filter (or backdrop-filter) value, as [name,
  // number, in per cent].
  const filterParts = (f) => {
    const out = [];
    if (!f || f === 'none') return out;
    for (const m of f.matchAll(/(opacity|blur)\(([^)]*)\)/g)) {
      const x = parseFloat(m[2]);
      if (Number.isFinite(x)) out.push([m[1], x, m[2].trim().endsWith('%')]);
    }
    return out;
  };
  const paints = new Map();
  const paintOf = (el) => {
    const todo = [];
    let a = el;
    for (; a && !paints.has(a); a = up(a)) todo.push(a);
    let acc = a ? paints.get(a) : { alpha: 1, blur: 0 };
    for (let i = todo.length - 1; i >= 0; i--) {
      const s = style(todo[i]);
      let { alpha: o, blur } = acc;
      const own = parseFloat(s.opacity);
      if (Number.isFinite(own)) o *= own;
      for (const [fn, x, pct] of filterParts(s.filter)) {
        if (fn === 'opacity') o *= pct ? x / 100 : x;
        else blur += x;
      }
      acc = { alpha: o, blur };
      paints.set(todo[i], acc);
    }
    return acc;
  };
  // Whether an element's glyphs are painted with a background clipped to text (a gradient
  // heading: transparent fill, background-clip: text on it or an ancestor).
  const clipsText = (el) => {
    for (let a = el; a; a = up(a)) {
      const s = style(a);
      if (s.backgroundClip === 'text' || s.webkitBackgroundClip === 'text') {
        return s.backgroundImage !== 'none' || alpha(s.backgroundColor) > 0;
      }
    }
    return false;
  };

  // Whether a text node is painted where a person can read it: its owner rendered; its glyphs
  // filled (in a colour, or with a background clipped to text) at min_text_alpha or more of
  // opacity through the flat tree, so an underline or a background in the text's box cannot
  // stand in for glyphs hardly drawn; its largest line at least min_text_px across on screen
  // (after transforms and zoom), and so what clipping leaves of it; blurred by at most
  // max_text_blur of its font size; and not clipped away.
  const range = doc.createRange();
  const textShown = (n) => {
    if (!/\S/.test(n.data)) return false;
    const p = textOwner(n);
    if (!p || !rendered(p)) return false;
    const s = style(p);
    const fill = alpha(s.webkitTextFillColor) > 0 ? alpha(s.webkitTextFillColor) : clipsText(p) ? 1 : 0;
    const pt = paintOf(p);
    if (fill * pt.alpha < P.min_text_alpha) return false;
    if (pt.blur > P.max_text_blur * (parseFloat(s.fontSize) || 0)) return false;
    range.selectNodeContents(n);
    // A line's size across: its height, or for three characters or more its shorter side (a
    // tiny line turned on its side is as tall as it is long; one or two narrow glyphs are not).
    const across = n.data.trim().length >= 3 ? (w, h) => Math.min(w, h) : (w, h) => h;
    let tall = 0;
    for (const r of range.getClientRects()) tall = Math.max(tall, across(r.width, r.height));
    if (tall < P.min_text_px) return false;
    let v = docRect(range.getBoundingClientRect());
    const ch = chain(p, true);
    if (ch.clip) {
      // What a clip leaves of the text must still be a readable line: not a band of it.
      v = intersect(v, ch.clip);
      if (across(width(v), height(v)) < P.min_text_px) return false;
    }
    return onScreen(v);
  };

  // A short CSS path for reports: up to four levels, stopping at an id; "::shadow" marks a
  // step from a shadow tree to its host.
  const path = (el) => {
    const parts = [];
    for (let e = el; e && e !== body && e !== root && parts.length < 4; ) {
      let p = e.tagName.toLowerCase();
      if (e.id) {
        parts.unshift(p + '#' + CSS.escape(e.id));
        break;
      }
      const tid = e.getAttribute('data-testid');
      if (tid) p += '[data-testid="' + tid.replace(/["\\]/g, '\\$&') + '"]';
      else if (e.classList.length) p += '.' + [...e.classList].slice(0, 2).map((c) => CSS.escape(c)).join('.');
      parts.unshift(p);
      if (e.parentElement) e = e.parentElement;
      else {
        const r = e.parentNode;
        e = r && r.nodeType === 11 ? r.host : null;
        if (e) parts.unshift('::shadow');
      }
    }
    return parts.join(' > ').replace(/> ::shadow >/g, '::shadow >');
  };

  // Role locators (role=link[name="Docs"i], role=link[name=/^(Docs|GitHub)$/i],
  // role=heading[level=1]): an element's ARIA role, explicit or implied by its tag, and its
  // accessible name, as a person perceives it. Elements hidden from people (display: none,
  // visibility: hidden, aria-hidden) never match, as in Playwright's role engine.
  const parseRole = (sel) => {
    const m = /^role=([a-z]+)((?:\[[^\]]*\])*)$/.exec(sel);
    if (!m) throw new Error('bad role locator ' + sel);
    const out = { role: m[1], level: 0, mode: '', name: '' };
    const attrRe = /\[(name|level)=("(?:[^"\\]|\\.)*"[is]?|\/(?:[^\/\\]|\\.)+\/i?|[1-6])\]/g;
    for (let a; (a = attrRe.exec(m[2])); ) {
      const v = a[2];
      if (a[1] === 'level') out.level = Number(v);
      else if (v[0] === '"') {
        const flag = v.endsWith('"') ? '' : v[v.length - 1];
        out.name = JSON.parse(flag ? v.slice(0, -1) : v);
        out.mode = { '': 'substring', i: 'exact_i', s: 'exact' }[flag];
      } else {
        const i = v.endsWith('/i');
        out.re = new RegExp(v.slice(1, i ? -2 : -1), i ? 'i' : '');
        out.mode = 'regexp';
      }
    }
    return out;
  };
  const INPUT_ROLE = { button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox',
    radio: 'radio', range: 'slider', number: 'spinbutton', search: 'searchbox', text: 'textbox', email: 'textbox',
    tel: 'textbox', url: 'textbox', '': 'textbox' };
  const TAG_ROLE = { BUTTON: 'button', NAV: 'navigation', MAIN: 'main', ASIDE: 'complementary', ARTICLE: 'article',
    UL: 'list', OL: 'list', MENU: 'list', LI: 'listitem', TABLE: 'table', TR: 'row', TD: 'cell', TH: 'columnheader',
    DIALOG: 'dialog', DETAILS: 'group', FIELDSET: 'group', P: 'paragraph', OPTION: 'option', PROGRESS: 'progressbar',
    HR: 'separator', TEXTAREA: 'textbox', FIGURE: 'figure', BLOCKQUOTE: 'blockquote', FORM: 'form', SEARCH: 'search' };
  const implicitRole = (el) => {
    const t = el.tagName;
    if (/^H[1-6]$/.test(t)) return 'heading';
    if (t === 'A' || t === 'AREA') return el.hasAttribute('href') ? 'link' : 'generic';
    if (t === 'INPUT') return INPUT_ROLE[(el.getAttribute('type') || '').toLowerCase()] || '';
    if (t === 'SELECT') return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
    if (t === 'IMG') return el.getAttribute('alt') === '' ? 'presentation' : 'img';
    if (t === 'HEADER' || t === 'FOOTER') {
      for (let a = up(el); a; a = up(a)) if (/^(ARTICLE|ASIDE|MAIN|NAV|SECTION)$/.test(a.tagName)) return 'generic';
      return t === 'HEADER' ? 'banner' : 'contentinfo';
    }
    if (t === 'SECTION') return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : 'generic';
    return TAG_ROLE[t] || '';
  };
  const roleOf = (el) => (el.getAttribute('role') || '').trim().split(/\s+/)[0] || implicitRole(el);
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'cell', 'columnheader', 'rowheader', 'checkbox',
    'radio', 'switch', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'tab', 'treeitem', 'tooltip', 'gridcell']);
  const hiddenFromPeople = (el) => {
    for (let a = el; a && a.nodeType === 1; a = up(a)) {
      if (a.getAttribute('aria-hidden') === 'true') return true;
      const s = style(a);
      if (s.display === 'none') return true;
    }
    return style(el).visibility !== 'visible';
  };
  // The text an element contributes to a name, from its flat-tree content.
  const contentText = (el, depth) => {
    if (depth > 32) return '';
    let out = '';
    for (const n of flatChildren(el)) {
      if (n.nodeType === 3) out += n.data;
      else if (n.nodeType === 1 && !SKIP.has(n.tagName) && !hiddenFromPeople(n)) {
        const label = n.getAttribute('aria-label');
        if (label && label.trim()) out += ' ' + label + ' ';
        else if (n.tagName === 'IMG') out += ' ' + (n.getAttribute('alt') || '') + ' ';
        else {
          const block = style(n).display !== 'inline';
          out += (block ? ' ' : '') + contentText(n, depth + 1) + (block ? ' ' : '');
        }
      }
    }
    return out;
  };
  const byId = (el, id) => {
    const r = el.getRootNode();
    return r && r.getElementById ? r.getElementById(id) : null;
  };
  const accName = (el, role) => {
    const ids = (el.getAttribute('aria-labelledby') || '').trim();
    if (ids) {
      const parts = ids.split(/\s+/).map((id) => byId(el, id)).filter(Boolean).map((r) => r.getAttribute('aria-label') || contentText(r, 0));
      if (norm(parts.join(' '))) return norm(parts.join(' '));
    }
    const label = el.getAttribute('aria-label');
    if (label && norm(label)) return norm(label);
    const t = el.tagName;
    if (t === 'INPUT' || t === 'TEXTAREA' || t === 'SELECT') {
      const type = (el.getAttribute('type') || '').toLowerCase();
      if (t === 'INPUT' && /^(button|submit|reset)$/.test(type)) return norm(el.value || (type === 'submit' ? 'Submit' : type === 'reset' ? 'Reset' : ''));
      const labels = el.labels ? [...el.labels].map((l) => contentText(l, 0)).join(' ') : '';
      if (norm(labels)) return norm(labels);
      return norm(el.getAttribute('placeholder') || el.getAttribute('title') || '');
    }
    if (t === 'IMG') return norm(el.getAttribute('alt') || el.getAttribute('title') || '');
    if (NAME_FROM_CONTENT.has(role)) {
      const c = norm(contentText(el, 0));
      if (c) return c;
    }
    return norm(el.getAttribute('title') || '');
  };
  const nameMatches = (loc, name) => {
    switch (loc.mode) {
      case '':
        return true;
      case 'substring':
        return name.toLowerCase().includes(norm(loc.name).toLowerCase());
      case 'exact_i':
        return name.toLowerCase() === norm(loc.name).toLowerCase();
      case 'exact':
        return name === norm(loc.name);
      default:
        return loc.re.test(name);
    }
  };
  const roleQuery = (scope, sel) => {
    const loc = parseRole(sel);
    const out = [];
    for (const el of scope.querySelectorAll('*')) {
      const role = roleOf(el);
      if (role !== loc.role || hiddenFromPeople(el)) continue;
      if (loc.level) {
        const lv = Number(el.getAttribute('aria-level')) || Number((/^H([1-6])$/.exec(el.tagName) || [])[1]) || 0;
        if (lv !== loc.level) continue;
      }
      if (nameMatches(loc, accName(el, role))) out.push(el);
    }
    return out;
  };
  // Every match of a selector (CSS or a role locator) under one root.
  const queryIn = (scope, sel) => (sel.startsWith('role=') ? roleQuery(scope, sel) : [...scope.querySelectorAll(sel)]);
  // Every match of a selector in the document and in every shadow tree.
  const query = (sel) => roots.flatMap((r) => queryIn(r, sel));

  // Every non-blank text node of the composed tree, with the element that owns it.
  const textNodes = () => {
    const out = [];
    for (const r of roots) {
      const start = r === doc ? body : r;
      if (!start) continue;
      const walker = doc.createTreeWalker(start, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!/\S/.test(n.data)) continue;
        const p = up(n);
        if (!p || p.nodeType !== 1 || SKIP.has(p.tagName)) continue;
        out.push(n);
      }
    }
    return out;
  };

  // no_horizontal_overflow. An item (element or text) is cut off when part of it shows, it
  // extends past the viewport's right edge, no horizontal scroll container holds it (the
  // container is judged instead), and whatever hides the rest is the viewport itself or an
  // overflow hidden/clip on html, body or a wrapper reaching to within edge_zone_px of the
  // viewport's right edge. Not cut off: content entirely beyond the edge (an off-canvas
  // drawer), content clipped well inside the viewport (a cropped thumbnail), and text or
  // inline content truncated by text-overflow: ellipsis (a visible, deliberate truncation).
  // Shadow trees count like the rest of the page. With inScope, only the items it accepts
  // count.
  // Sideways scrollers holding wide content: a visible scroll container (overflow-x auto or
  // scroll) or a same-origin frame whose content is wider than the viewport and holds a
  // non-inline element (a table, a grid, a canvas, an image) wider than the viewport. Long lines
  // of text in a code block do not count; a table or a picture of one does.
  const REPLACED = new Set(['CANVAS', 'IMG', 'SVG', 'svg', 'VIDEO', 'IFRAME', 'OBJECT', 'EMBED', 'PICTURE']);
  const wideInside = (start, limit) => {
    const stack = [...flatChildren(start)];
    let seen = 0;
    while (stack.length && seen < 20000) {
      const n = stack.pop();
      seen++;
      if (n.nodeType !== 1 || SKIP.has(n.tagName)) continue;
      const s = n.ownerDocument === doc ? style(n) : n.ownerDocument.defaultView.getComputedStyle(n);
      if (s.display === 'none') continue;
      const w = n.getBoundingClientRect().width;
      if (w > limit + tol && (s.display !== 'inline' || REPLACED.has(n.tagName))) return n;
      stack.push(...flatChildren(n));
    }
    return null;
  };
  const wideScrollers = (inScope) => {
    const out = [];
    for (const el of everyElement()) {
      if (SKIP.has(el.tagName) || el === body || el === root) continue;
      const s = style(el);
      if (s.overflowX !== 'auto' && s.overflowX !== 'scroll') continue;
      if (el.scrollWidth <= el.clientWidth + tol || el.scrollWidth <= iw + tol) continue;
      if (inScope && !inScope(el)) continue;
      if (!visibleRect(el)) continue;
      const wide = wideInside(el, iw);
      if (wide) out.push({ el, wide });
    }
    for (const { frame, doc: d } of frameDocs()) {
      if (inScope && !inScope(frame)) continue;
      const se = d.scrollingElement || d.documentElement;
      if (!se || se.scrollWidth <= iw + tol || !visibleRect(frame)) continue;
      const wide = d.body ? wideInside(d.body, iw) : null;
      if (wide) out.push({ el: frame, wide });
    }
    return {
      wide_scrollers: out.length,
      wide_scroller_offenders: out.slice(0, P.max_offenders).map(({ el, wide }) => ({ selector: path(el), holds: wide.tagName.toLowerCase(), ...boxOf(elRect(el)) })),
    };
  };

  const overflow = (inScope) => {
    const offenders = new Set();
    const boxes = new Map();
    const judge = (owner, box, ch, own, inline) => {
      if (ch.scrollX) return;
      let v = box;
      if (own) v = intersect(v, own);
      if (ch.clip) v = intersect(v, ch.clip);
      if (width(v) <= minPx || height(v) <= minPx) return;
      if (v.l >= iw || v.r <= 0 || v.b <= 0) return;
      if (ch.clip && ch.clip.r < iw - P.edge_zone_px) return;
      if (ch.clip && ch.ellipsis && inline) return;
      if (inScope && !inScope(owner)) return;
      offenders.add(owner);
      const b = boxes.get(owner);
      boxes.set(owner, b ? { l: Math.min(b.l, box.l), t: Math.min(b.t, box.t), r: Math.max(b.r, box.r), b: Math.max(b.b, box.b) } : box);
    };
    if (body) {
      for (const el of everyElement()) {
        if (SKIP.has(el.tagName) || el === body || el === root) continue;
        const box = docRect(el.getBoundingClientRect());
        if (box.r <= iw + tol || box.l >= iw) continue;
        if (!rendered(el)) continue;
        judge(el, box, chain(el, false), ownClip(el, style(el), box), style(el).display === 'inline');
      }
      for (const n of textNodes()) {
        const p = textOwner(n);
        if (!p) continue;
        range.selectNodeContents(n);
        const box = docRect(range.getBoundingClientRect());
        if (box.r <= iw + tol || box.l >= iw) continue;
        if (!rendered(p)) continue;
        judge(p, box, chain(p, true), null, true);
      }
    }
    const outer = [...offenders].filter((el) => {
      for (let a = up(el); a; a = up(a)) if (offenders.has(a)) return false;
      return true;
    });
    // scroll_width is how far the viewport can be scrolled sideways: the document's
    // scrollWidth, or innerWidth when overflow hidden/clip on html or body stops horizontal
    // scrolling (what such a page cuts off is counted in clipped_elements instead).
    return {
      ...(inScope ? {} : wideScrollers(null)),
      scroll_width: rootScrollsX ? root.scrollWidth : iw,
      document_scroll_width: root.scrollWidth,
      inner_width: iw,
      clipped_elements: outer.length,
      clipped_offenders: outer.slice(0, P.max_offenders).map((el) => {
        const b = boxes.get(el);
        return { selector: path(el), right: round(b.r, 10), ...boxOf(b) };
      }),
    };
  };

  const norm = (s) => s.replace(/\s+/g, ' ').trim();

  // The composed text of a node: what its flat tree holds, shadow content and slotted nodes
  // included.
  const textOf = new Map();
  const composed = (n) => {
    if (n.nodeType === 3) return n.data;
    if (n.nodeType !== 1 || SKIP.has(n.tagName)) return '';
    let s = textOf.get(n);
    if (s === undefined) {
      s = flatChildren(n).map(composed).join('');
      textOf.set(n, s);
    }
    return s;
  };

  // The innermost elements of scope's flat tree (itself included) whose text contains text.
  const holders = (scope, text) => {
    const out = [];
    const visit = (el) => {
      if (SKIP.has(el.tagName) || !norm(composed(el)).includes(text)) return;
      let inner = false;
      for (const c of flatChildren(el)) {
        if (c.nodeType === 1 && norm(composed(c)).includes(text)) {
          inner = true;
          visit(c);
        }
      }
      if (!inner) out.push(el);
    };
    visit(scope);
    return out;
  };

  // Whether any text of el's flat subtree is painted on screen.
  const paintsText = (el) => {
    const stack = [el];
    while (stack.length) {
      const n = stack.pop();
      if (n.nodeType === 3) {
        if (textShown(n)) return true;
      } else if (n.nodeType === 1 && !SKIP.has(n.tagName)) {
        stack.push(...flatChildren(n));
      }
    }
    return false;
  };

  // A scope holds its text visibly when it is visible itself and does not reach past the
  // viewport inside a horizontal scroll container: a table row stretched past the edge there is
  // not a card however it is labelled. (A scope that overflows the page itself is the overflow
  // check's to judge, not this one's.)
  const fits = (el) => {
    const b = elRect(el);
    const first = boxless(el) ? [...el.children].find((c) => c.nodeType === 1) : el;
    return (b.l - sx >= -tol && b.r - sx <= iw + tol) || !first || !chain(first, false).scrollX;
  };

  // Where a holder's text is painted and a person could see it now: the union of its shown
  // text nodes' boxes, clipped, inside the viewport. The verifier looks at those pixels for ink:
  // text in its background's colour, under a filter or behind an opaque sheet paints nothing.
  const inkRegion = (el) => {
    const vp = { l: sx, t: sy, r: sx + iw, b: sy + ih };
    let u = null;
    const stack = [el];
    while (stack.length) {
      const n = stack.pop();
      if (n.nodeType === 3) {
        if (!textShown(n)) continue;
        range.selectNodeContents(n);
        let v = docRect(range.getBoundingClientRect());
        const p = textOwner(n);
        const ch = p ? chain(p, true) : null;
        if (ch && ch.clip) v = intersect(v, ch.clip);
        v = intersect(v, vp);
        if (width(v) >= 1 && height(v) >= 1) u = union(u, v);
      } else if (n.nodeType === 1 && !SKIP.has(n.tagName)) {
        stack.push(...flatChildren(n));
      }
    }
    return u;
  };

  // Where a person's eye falls on a holder's text: up to three points (document coordinates)
  // at mid-height of its shown lines inside the viewport, across the first line and on the
  // last. The verifier asks the browser what is on top there (covers).
  const spotsOf = (el) => {
    const vp = { l: sx, t: sy, r: sx + iw, b: sy + ih };
    const lines = [];
    const stack = [el];
    while (stack.length && lines.length < 200) {
      const n = stack.pop();
      if (n.nodeType === 3) {
        if (!textShown(n)) continue;
        const ch = chain(textOwner(n), true);
        range.selectNodeContents(n);
        for (const r of range.getClientRects()) {
          let v = intersect(docRect(r), vp);
          if (ch.clip) v = intersect(v, ch.clip);
          if (width(v) >= 1 && height(v) >= 1) lines.push(v);
        }
      } else if (n.nodeType === 1 && !SKIP.has(n.tagName)) {
        stack.push(...flatChildren(n).reverse());
      }
    }
    if (!lines.length) return [];
    const at = (v, f) => [round(v.l + width(v) * f, 10), round((v.t + v.b) / 2, 10)];
    const first = lines[0];
    const last = lines[lines.length - 1];
    return lines.length === 1 ? [at(first, 0.2), at(first, 0.5), at(first, 0.8)] : [at(first, 0.3), at(first, 0.7), at(last, 0.5)];
  };

  const texts = (r) => {
    const scopes = r.within ? query(r.within).filter((sc) => visibleRect(sc) !== null && fits(sc)) : body ? [body] : [];
    const out = {};
    r.texts.forEach((t, i) => {
      const want = norm(t);
      let shown = null;
      for (const sc of scopes) {
        shown = holders(sc, want).find((h) => paintsText(h)) || null;
        if (shown) break;
      }
      out['text.' + i + '.visible'] = shown !== null;
      if (shown) {
        out['text.' + i + '.box'] = boxOf(elRect(shown));
        const ink = inkRegion(shown);
        if (ink) out['text.' + i + '.ink_box'] = boxOf(ink);
        const sp = spotsOf(shown);
        if (sp.length) out['text.' + i + '.spots'] = sp;
      }
    });
    return out;
  };

  // Matches inside same-origin frames: attached, or rendered in a frame a person sees.
  const inFrames = (sel, visibleOnly) => {
    let n = 0;
    for (const { frame, doc: d } of frameDocs()) {
      if (visibleOnly && !visibleRect(frame)) continue;
      for (const e of queryIn(d, sel)) {
        if (!visibleOnly) n++;
        else if (e.getClientRects().length > 0 && e.checkVisibility({ opacityProperty: true, visibilityProperty: true })) n++;
      }
    }
    return n;
  };

  const count = (r) => {
    const els = query(r.selector);
    if (r.state === 'attached') return { count: els.length + inFrames(r.selector, false) };
    const vis = [];
    for (const e of els) {
      const v = visibleRect(e);
      if (v) vis.push(v);
    }
    const framed = inFrames(r.selector, true);
    return { count: vis.length + framed, boxes: vis.slice(0, P.max_offenders).map(boxOf), ...(framed ? { in_frames: framed } : {}) };
  };

  // in_viewport: the first visible match's border box in viewport coordinates.
  const box = (r) => {
    const els = query(r.selector);
    const vis = els.filter((e) => visibleRect(e) !== null);
    const el = vis[0] || els[0];
    const b = el ? el.getBoundingClientRect() : { left: 0, top: 0, right: 0, bottom: 0 };
    return { count: vis.length, left: b.left, top: b.top, right: b.right, bottom: b.bottom, inner_width: iw, inner_height: ih };
  };

  // Matches in flat-tree order, the order the page is laid out and read in (the document's
  // and every shadow tree's matches merged); a match outside the flat tree (an unslotted
  // child) is not rendered and is left out.
  const inFlatOrder = (els) => {
    const want = new Set(els);
    const out = [];
    const stack = want.size ? [root] : [];
    while (stack.length) {
      const n = stack.pop();
      if (n.nodeType !== 1) continue;
      if (want.has(n)) out.push(n);
      const kids = flatChildren(n);
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
    return out;
  };
  // The visible matches of a selector in flat-tree order, each with its visible region.
  const visibleInOrder = (sel) => {
    const out = [];
    for (const el of inFlatOrder(query(sel))) {
      const v = visibleRect(el);
      if (v) out.push({ el, v });
    }
    return out;
  };

  // attribute: the first attached match's attribute, "" when it has none.
  const attribute = (r) => {
    const els = query(r.selector);
    const v = els.length ? els[0].getAttribute(r.name) : null;
    return { count: els.length, value: v === null ? '' : v };
  };

  // background: where the verifier samples pixels, the part of the first visible match's
  // visible region inside the viewport, in document coordinates. Only a match with a part in
  // the viewport counts: elsewhere nothing painted can be read. The verifier captures those
  // pixels and computes their luminance; nothing here reads a colour from CSS, which a page
  // can set to one thing while painting another.
  const background = (r) => {
    const vp = { l: sx, t: sy, r: sx + iw, b: sy + ih };
    const shown = [];
    for (const { v } of visibleInOrder(r.selector)) {
      const s = intersect(v, vp);
      if (width(s) >= 1 && height(s) >= 1) shown.push(s);
    }
    return { count: shown.length, sample: shown.length ? boxOf(shown[0]) : null };
  };

  // stacked: the visible matches' border boxes in flat-tree order; an item overlaps when its
  // top is above the previous one's bottom (beyond edge_tolerance_px).
  const stacked = (r) => {
    const items = visibleInOrder(r.selector).map(({ el }) => elRect(el));
    let overlaps = 0;
    for (let i = 1; i < items.length; i++) if (items[i].t < items[i - 1].b - tol) overlaps++;
    const lefts = items.map((b) => b.l);
    return {
      count: items.length,
      stack_overlaps: overlaps,
      left_spread: items.length ? round(Math.max(...lefts) - Math.min(...lefts), 10) : 0,
      boxes: items.slice(0, P.max_offenders).map(boxOf),
    };
  };

  // position: the first visible match's border box in document coordinates, and the same for
  // the element it must come before or after.
  // hasText keeps the matches whose text (as a name is read from content) holds t, ignoring
  // case and runs of whitespace: Playwright's filter({ hasText }).
  const hasText = (matches, t) => {
    if (!t) return matches;
    const want = norm(t).toLowerCase();
    return matches.filter(({ el }) => norm(contentText(el, 0)).toLowerCase().includes(want));
  };
  const placed = (sel, t) => {
    const vis = hasText(visibleInOrder(sel), t);
    const b = vis.length ? elRect(vis[0].el) : { t: 0, b: 0, l: 0, r: 0 };
    return { count: vis.length, top: round(b.t, 10), bottom: round(b.b, 10), el: vis.length ? vis[0].el : null, box: b };
  };
  // The content of the page's main region (its first displayed main landmark, else the body)
  // that lies wholly above and wholly below el: painted text, and displayed images, media and
  // controls, leaving out el's own ancestors and descendants. "At the bottom of the page" is
  // after all of it; on a page one screen tall the order decides, not the screen.
  const contentAround = (el) => {
    const mains = visibleInOrder('main, [role="main"]');
    const region = mains.length ? mains[0].el : body;
    const mine = elRect(el);
    let before = 0;
    let after = 0;
    const count = (v) => {
      if (v.b <= mine.t + tol) before++;
      else if (v.t >= mine.b - tol) after++;
    };
    for (const n of textNodes()) {
      if (!inside(n, region) || inside(n, el) || !textShown(n)) continue;
      range.selectNodeContents(n);
      count(docRect(range.getBoundingClientRect()));
    }
    for (const m of query('img, svg, canvas, video, input, button, select, textarea')) {
      if (!inside(m, region) || inside(m, el) || inside(el, m)) continue;
      const v = visibleRect(m);
      if (v) count(v);
    }
    return { content_before: before, content_after: after };
  };
  // beside: how an element and the one it must be next to share a row. row_overlap is the
  // share of the shorter box's height both boxes cover; beside_gap the horizontal gap between
  // them (negative when they overlap sideways); content_between the painted text, images,
  // media and controls anywhere on the page (not inside either, nor around both) that lie
  // between them on that row. Two boxes on one row with a third thing between are not next
  // to each other.
  const beside = (a, ae, b, be) => {
    const overlap = Math.min(a.b, b.b) - Math.max(a.t, b.t);
    const shorter = Math.min(a.b - a.t, b.b - b.t);
    const row_overlap = shorter > 0 ? Math.max(0, overlap) / shorter : 0;
    const leftFirst = a.l <= b.l;
    const L = leftFirst ? a : b;
    const R = leftFirst ? b : a;
    const gap = R.l - L.r;
    const top = Math.max(a.t, b.t);
    const bottom = Math.min(a.b, b.b);
    let between = 0;
    const count = (v) => {
      if (v.l >= L.r - tol && v.r <= R.l + tol && v.b > top + tol && v.t < bottom - tol && width(v) >= 1) between++;
    };
    const mineOrAround = (n) => inside(n, ae) || inside(n, be) || (inside(ae, n) && inside(be, n));
    if (gap > 0) {
      for (const n of textNodes()) {
        if (mineOrAround(n) || !textShown(n)) continue;
        range.selectNodeContents(n);
        count(docRect(range.getBoundingClientRect()));
      }
      for (const m of query('img, svg, canvas, video, input, button, select, textarea')) {
        if (mineOrAround(m) || inside(ae, m) || inside(be, m)) continue;
        const v = visibleRect(m);
        if (v) count(v);
      }
    }
    return { row_overlap: round(row_overlap, 100), beside_gap: round(gap, 10), content_between: between };
  };
  const position = (r) => {
    const me = placed(r.selector, r.has_text);
    const docHeight = (doc.scrollingElement || root).scrollHeight;
    const out = { count: me.count, top: me.top, bottom: me.bottom, from_end: round(docHeight - me.bottom, 10), inner_height: ih, document_height: docHeight };
    Object.assign(out, me.el ? contentAround(me.el) : { content_before: -1, content_after: -1 });
    if (r.ref) {
      const o = placed(r.ref);
      out['ref.count'] = o.count;
      out['ref.top'] = o.top;
      out['ref.bottom'] = o.bottom;
      if (r.beside) {
        Object.assign(out, me.el && o.el ? beside(me.box, me.el, o.box, o.el) : { row_overlap: 0, beside_gap: -1, content_between: -1 });
      }
    }
    return out;
  };

  // structure: what a person finds in the page's main region (its first displayed main
  // landmark, else the body), in reading order: each heading (with its level), link, button,
  // image, list, table, form and form control shown to people, by role and accessible name.
  // Names are whitespace-collapsed, digits read as '#' (a date or a count may differ between
  // two loads of one page) and cut at 40 characters; at most max_structure_items are listed.
  const STRUCTURAL = new Set(['heading', 'link', 'button', 'img', 'list', 'table', 'form', 'textbox', 'searchbox',
    'checkbox', 'radio', 'switch', 'combobox', 'listbox', 'slider', 'spinbutton', 'navigation', 'region', 'dialog', 'tab']);
  const structure = () => {
    const mains = visibleInOrder('main, [role="main"]');
    const region = mains.length ? mains[0].el : body;
    const items = [];
    let total = 0;
    const stack = region ? [region] : [];
    while (stack.length) {
      const n = stack.pop();
      if (n.nodeType !== 1 || SKIP.has(n.tagName)) continue;
      const kids = flatChildren(n);
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
      const role = roleOf(n);
      if (!STRUCTURAL.has(role) || hiddenFromPeople(n) || visibleRect(n) === null) continue;
      total++;
      if (items.length >= P.max_structure_items) continue;
      let item = role;
      if (role === 'heading') item += Number(n.getAttribute('aria-level')) || Number((/^H([1-6])$/.exec(n.tagName) || [])[1]) || 2;
      const name = accName(n, role).replace(/[0-9]/g, '#').slice(0, 40);
      items.push(name ? item + ' "' + name + '"' : item);
    }
    return { structure: items.join('\n'), structure_items: total };
  };

  // no_horizontal_overflow within a part of the page: the elements of the visible scopes'
  // flat subtrees (the scopes included), and the owners of their text, that are rendered and
  // whose region left by clipping reaches past the viewport's left or right edge, either
  // partly on screen or wholly past the right edge where the viewport scrolls to it (not an
  // off-canvas panel behind overflow hidden on html or body, not a fixed one); unless a
  // horizontal scroll container that itself fits the viewport holds them. Plus the page's
  // clipped items, kept to those inside a scope.
  const scopedOverflow = (r) => {
    const scopes = visibleInOrder(r.within).map(({ el }) => el);
    const scopeSet = new Set(scopes);
    const inScope = (el) => {
      for (let a = el; a; a = up(a)) if (scopeSet.has(a)) return true;
      return false;
    };
    const fixed = (el) => {
      for (let a = el; a && a !== root; a = up(a)) if (style(a).position === 'fixed') return true;
      return false;
    };
    const fitsBox = (b) => b.left >= -tol && b.right <= iw + tol;
    const held = (ch) => ch.scrollX && ch.scroller && fitsBox(ch.scroller.getBoundingClientRect());
    // Whether region v of el, clipped as ch says, reaches past an edge where it counts.
    const reaches = (el, v, ch) => {
      if (width(v) <= minPx || height(v) <= minPx || v.b <= 0 || (!rootScrollsY && v.t >= sy + ih)) return false;
      const l = v.l - sx;
      const rt = v.r - sx;
      if (l >= -tol && rt <= iw + tol) return false;
      const shown = rt > 0 && l < iw;
      const scrolledTo = l >= iw && rootScrollsX && !fixed(el);
      return (shown || scrolledTo) && !held(ch);
    };
    const over = new Set();
    const seen = new Set();
    const stack = [...scopes];
    while (stack.length) {
      const n = stack.pop();
      if (seen.has(n)) continue;
      seen.add(n);
      if (n.nodeType === 3) {
        if (!/\S/.test(n.data)) continue;
        const p = textOwner(n);
        if (!p || !rendered(p)) continue;
        const s = style(p);
        if (alpha(s.color) === 0 || alpha(s.webkitTextFillColor) === 0) continue;
        range.selectNodeContents(n);
        let v = docRect(range.getBoundingClientRect());
        const ch = chain(p, true);
        if (ch.clip) v = intersect(v, ch.clip);
        if (reaches(p, v, ch)) over.add(p);
        continue;
      }
      if (n.nodeType !== 1 || SKIP.has(n.tagName)) continue;
      stack.push(...flatChildren(n));
      if (!rendered(n)) continue;
      const box = docRect(n.getBoundingClientRect());
      let v = box;
      const own = ownClip(n, style(n), box);
      if (own) v = intersect(v, own);
      const ch = chain(n, false);
      if (ch.clip) v = intersect(v, ch.clip);
      if (reaches(n, v, ch)) over.add(n);
    }
    const o = overflow(inScope);
    const list = inFlatOrder([...over]);
    return {
      count: scopes.length,
      inner_width: iw,
      overflowing_elements: list.length,
      overflowing_offenders: list.slice(0, P.max_offenders).map((el) => {
        const b = docRect(el.getBoundingClientRect());
        return { selector: path(el), right: round(b.r, 10), ...boxOf(b) };
      }),
      clipped_elements: o.clipped_elements,
      clipped_offenders: o.clipped_offenders,
    };
  };

  // Whether anything is rendered at all: a first paint of an empty page settles nothing.
  const hasContent = () => {
    if (!body) return false;
    if (textNodes().some(textShown)) return true;
    return query('img, svg, canvas, video, iframe, input, button').some((el) => visibleRect(el) !== null);
  };

  // Whether what the browser hit at a spot of a text's holder paints over the text. The
  // holder, or anything in it, is the text itself (a pseudo-element of its own letters too). A
  // ::before or ::after, another element or an ancestor covers it when it paints there at half
  // opacity or more: a background colour or image, a picture or a field, text of its own at the
  // spot (a pseudo-element's content). A transparent box (a stretched link's ::after, a bare
  // button laid over a card) does not.
  const OWN_PSEUDO = new Set(['::first-letter', '::first-line', '::marker', '::selection']);
  const PAINTS_OVER = new Set(['IMG', 'CANVAS', 'VIDEO', 'IFRAME', 'FRAME', 'INPUT', 'TEXTAREA', 'SELECT', 'OBJECT', 'EMBED']);
  // A background image covers unless it is gradients alone whose colours are all under half
  // opacity: a scrim laid over a card's title darkens it, and a person still reads it.
  const imageCovers = (bg) => {
    if (!bg || bg === 'none') return false;
    if (/(url|image-set|cross-fade|element|paint)\(/.test(bg)) return true;
    const colors = bg.match(/(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\([^()]*\)/g);
    return !colors || colors.some((c) => alpha(c) >= 0.5);
  };
  // Whether an <svg> the browser hit draws at the spot. Its shapes are hit where they paint,
  // but not under pointer-events: none, where the hit is the <svg> box: its shapes are then
  // asked whether the spot is in their fill or stroke; text, pictures and the like by box.
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const SVG_BOXES = new Set(['text', 'image', 'use', 'foreignObject']);
  const svgPaintsAt = (svg, spot) => {
    const cx = spot[0] - sx;
    const cy = spot[1] - sy;
    let n = 0;
    for (const g of svg.querySelectorAll('*')) {
      if (++n > 2000) return true; // more than the verifier asks: taken as drawn there
      const shape = g instanceof SVGGeometryElement;
      if (!shape && !SVG_BOXES.has(g.localName)) continue;
      if (g.closest('defs, pattern, clipPath, mask, marker, symbol') || paintOf(g).alpha < 0.5) continue;
      const r = g.getBoundingClientRect();
      if (cx < r.left || cx > r.right || cy < r.top || cy > r.bottom) continue;
      if (!shape) return true;
      const m = g.getScreenCTM();
      if (!m) continue;
      const p = new DOMPoint(cx, cy).matrixTransform(m.inverse());
      const st = style(g);
      const opaque = (paint, o) => paint !== 'none' && parseFloat(o) >= 0.5;
      if ((opaque(st.fill, st.fillOpacity) && g.isPointInFill(p)) || (opaque(st.stroke, st.strokeOpacity) && g.isPointInStroke(p))) return true;
    }
    return false;
  };
  const backdropBlur = (st) =>
    filterParts(st.backdropFilter || st.webkitBackdropFilter).reduce((b, [fn, x]) => (fn === 'blur' ? b + x : b), 0);
  // Whether the hit element, or an ancestor of it that is not the text's, blurs its backdrop
  // by more than limit.
  const overBlurs = (el, holder, limit) => {
    for (let a = el; a && a.nodeType === 1 && !inside(holder, a); a = up(a)) {
      if (backdropBlur(style(a)) > limit) return true;
    }
    return false;
  };
  const covers = (hit, holder, spot) => {
    let el = hit;
    let pseudo = null;
    if (typeof CSSPseudoElement !== 'undefined' && hit instanceof CSSPseudoElement) {
      el = hit.element;
      pseudo = hit.type;
      if (OWN_PSEUDO.has(pseudo) && inside(el, holder)) return false;
    } else {
      if (hit.nodeType === 3) el = textOwner(hit);
      if (!el || inside(hit, holder)) return false;
    }
    if (!el || el.nodeType !== 1) return false;
    const s = pseudo ? getComputedStyle(el, pseudo) : style(el);
    let o = paintOf(el).alpha;
    if (pseudo) o *= Number.isFinite(parseFloat(s.opacity)) ? parseFloat(s.opacity) : 1;
    if (o < 0.5) return false;
    if (alpha(s.backgroundColor) >= 0.5 || imageCovers(s.backgroundImage)) return true;
    // An ancestor hit over its own text paints there only by its background (the text sits
    // below it at a negative z-index): being a button or holding text of its own is not cover.
    if (!pseudo && inside(holder, el)) return false;
    // A sheet that blurs what is behind it (backdrop-filter) blurs the text as a filter on the
    // text would: past max_text_blur of its font size, a person no longer reads it.
    const limit = P.max_text_blur * (parseFloat(style(holder).fontSize) || 16);
    if (pseudo ? backdropBlur(s) > limit : overBlurs(el, holder, limit)) return true;
    if (pseudo) return /^".*\S.*"$/.test(s.content || '') && alpha(s.webkitTextFillColor) >= 0.5;
    if (PAINTS_OVER.has(el.tagName)) return true;
    if (el.namespaceURI === SVG_NS) return el.localName !== 'svg' || svgPaintsAt(el, spot);
    const [x, y] = spot;
    for (const c of flatChildren(el)) {
      if (c.nodeType !== 3 || !/\S/.test(c.data) || !textShown(c)) continue;
      range.selectNodeContents(c);
      for (const r of range.getClientRects()) {
        const v = docRect(r);
        if (x >= v.l && x <= v.r && y >= v.t && y <= v.b) return true;
      }
    }
    return false;
  };
  if (request.op === 'covers') {
    // checks: [{within, text, hits: [index into hits | -1 nothing there | -2 something the
    // verifier cannot read, such as another frame's content]}], spots in the same order.
    return {
      now: performance.now(),
      covered: request.checks.map((c) => {
        const scopes = c.within ? query(c.within).filter((sc) => visibleRect(sc) !== null && fits(sc)) : body ? [body] : [];
        const want = norm(c.text);
        let holder = null;
        for (const sc of scopes) {
          holder = holders(sc, want).find((h) => paintsText(h)) || null;
          if (holder) break;
        }
        if (!holder) return c.hits.length;
        return c.hits.filter((h, k) => h === -2 || (h >= 0 && hits[h] != null && covers(hits[h], holder, c.spots[k]))).length;
      }),
    };
  }

  const results = (request.reads || []).map((r) => {
    switch (r.kind) {
      case 'overflow':
        return r.within ? scopedOverflow(r) : overflow(null);
      case 'texts':
        return texts(r);
      case 'count':
        return count(r);
      case 'box':
        return box(r);
      case 'attribute':
        return attribute(r);
      case 'background':
        return background(r);
      case 'stacked':
        return stacked(r);
      case 'position':
        return position(r);
      case 'structure':
        return structure();
      case 'driver':
        return {}; // read by the verifier outside the page (url, request)
    }
    throw new Error('probe: unknown read ' + r.kind);
  });

  const q = observe();
  return {
    now: performance.now(),
    quiet_ms: performance.now() - q.last,
    mutations: q.mutations,
    signature: signature(),
    content: request.content ? hasContent() : null,
    results,
  };
}
