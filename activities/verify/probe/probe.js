// Signoff verifier probe (DESIGN section 5).
//
// It runs in an isolated world the verifier creates over CDP (Page.createIsolatedWorld), so the
// app's scripts cannot redefine the getters it reads: a page that patches
// Element.prototype.scrollWidth or window.innerWidth in its own world changes nothing here.
// The verifier evaluates it as (probe)(request); request.op says what to do:
//
//   install  start counting DOM mutations (the quiet clock)
//   read     measure request.reads, plus the page signature used to decide the page settled
//
// This file and params.json are hashed into the verifier digest: a change to either makes
// contracts frozen under the old semantics fail verification instead of being judged by new
// rules. Keep it deterministic and free of side effects on the page.
(request) => {
  const P = request.params;
  const doc = document;
  const root = doc.documentElement;
  const body = doc.body;

  if (request.op === 'install') {
    if (!globalThis.__signoffQuiet) {
      const state = { last: performance.now(), mutations: 0 };
      new MutationObserver((records) => {
        state.last = performance.now();
        state.mutations += records.length;
      }).observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });
      globalThis.__signoffQuiet = state;
    }
    return { installed: true };
  }

  const iw = window.innerWidth;
  const ih = window.innerHeight;
  const sx = window.scrollX;
  const sy = window.scrollY;
  const tol = P.edge_tolerance_px;
  const minPx = P.min_visible_px;
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE']);
  const EVERYWHERE = { l: -Infinity, t: -Infinity, r: Infinity, b: Infinity };

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

  // The viewport's horizontal overflow comes from html, or from body when html's is visible.
  const viewportOverflow = (axis) => {
    const h = style(root)[axis];
    if (h !== 'visible') return h;
    return body ? style(body)[axis] : 'visible';
  };
  const rootScrollsX = !['hidden', 'clip'].includes(viewportOverflow('overflowX'));
  const rootScrollsY = !['hidden', 'clip'].includes(viewportOverflow('overflowY'));

  // Opacity 0 on an element or any ancestor hides it from a person.
  const faded = new Map();
  const transparent = (el) => {
    if (!el) return false;
    let v = faded.get(el);
    if (v === undefined) {
      v = style(el).opacity === '0' || transparent(el.parentElement);
      faded.set(el, v);
    }
    return v;
  };

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

  // Walks the ancestors that can clip el (its containing-block chain, html and body excluded:
  // the viewport is judged directly). With fromSelf, el itself is the first clipper (for its
  // text). Returns the region left visible (null: unclipped) and whether a scroll container
  // (overflow auto/scroll) holds el on each axis: such content is reachable by scrolling it.
  const chain = (el, fromSelf) => {
    let clip = null;
    let scrollX = false;
    let scrollY = false;
    let ellipsis = null; // text-overflow of the nearest ancestor that clips horizontally
    let pos = fromSelf ? 'static' : style(el).position;
    for (let a = fromSelf ? el : el.parentElement; a && a !== root && a !== body; a = a.parentElement) {
      const s = style(a);
      if (pos === 'fixed' && !makesBlock(s)) continue;
      if (pos === 'absolute' && s.position === 'static' && !makesBlock(s)) continue;
      const box = docRect(a.getBoundingClientRect());
      const own = ownClip(a, s, box);
      if (own) clip = intersect(clip || EVERYWHERE, own);
      if (s.display !== 'inline' && s.display !== 'contents') {
        const ox = s.overflowX;
        const oy = s.overflowY;
        if (ox === 'auto' || ox === 'scroll') scrollX = true;
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
    return { clip, scrollX, scrollY, ellipsis: ellipsis === true };
  };

  // The part of el a person can see or scroll to, or null. Stricter than "has a box": 1px
  // visually-hidden text, opacity 0, content clipped away by overflow hidden/clip, and content
  // parked where no scrolling reaches (left of 0, above 0, or right of a page that cannot
  // scroll sideways) are not visible.
  const visibleRect = (el) => {
    if (!el.isConnected || SKIP.has(el.tagName)) return null;
    if (el.getClientRects().length === 0) return null;
    const s = style(el);
    if (s.visibility !== 'visible' || transparent(el)) return null;
    const box = docRect(el.getBoundingClientRect());
    let v = box;
    const own = ownClip(el, s, box);
    if (own) v = intersect(v, own);
    const ch = chain(el, false);
    if (ch.clip) v = intersect(v, ch.clip);
    if (width(v) <= minPx || height(v) <= minPx) return null;
    if (v.r <= 0 || v.b <= 0) return null;
    if (!rootScrollsX && v.l >= iw) return null;
    if (!rootScrollsY && v.t >= ih) return null;
    return v;
  };

  // A short CSS path for reports: up to four levels, stopping at an id.
  const path = (el) => {
    const parts = [];
    for (let e = el; e && e !== body && e !== root && parts.length < 4; e = e.parentElement) {
      let p = e.tagName.toLowerCase();
      if (e.id) {
        parts.unshift(p + '#' + CSS.escape(e.id));
        break;
      }
      const tid = e.getAttribute('data-testid');
      if (tid) p += '[data-testid="' + tid.replace(/["\\]/g, '\\$&') + '"]';
      else if (e.classList.length) p += '.' + [...e.classList].slice(0, 2).map((c) => CSS.escape(c)).join('.');
      parts.unshift(p);
    }
    return parts.join(' > ');
  };

  // no_horizontal_overflow. An item (element or text) is cut off when part of it shows, it
  // extends past the viewport's right edge, no horizontal scroll container holds it (the
  // container is judged instead), and whatever hides the rest is the viewport itself or an
  // overflow hidden/clip on html, body or a wrapper reaching to within edge_zone_px of the
  // viewport's right edge. Not cut off: content entirely beyond the edge (an off-canvas
  // drawer), content clipped well inside the viewport (a cropped thumbnail), and text or
  // inline content truncated by text-overflow: ellipsis (a visible, deliberate truncation).
  const overflow = () => {
    const offenders = new Set();
    const rights = new Map();
    const judge = (owner, box, ch, own, inline) => {
      if (ch.scrollX) return;
      let v = box;
      if (own) v = intersect(v, own);
      if (ch.clip) v = intersect(v, ch.clip);
      if (width(v) <= minPx || height(v) <= minPx) return;
      if (v.l >= iw || v.r <= 0 || v.b <= 0) return;
      if (ch.clip && ch.clip.r < iw - P.edge_zone_px) return;
      if (ch.clip && ch.ellipsis && inline) return;
      offenders.add(owner);
      rights.set(owner, Math.max(rights.get(owner) ?? -Infinity, box.r));
    };
    if (body) {
      for (const el of body.querySelectorAll('*')) {
        if (SKIP.has(el.tagName)) continue;
        const box = docRect(el.getBoundingClientRect());
        if (box.r <= iw + tol || box.l >= iw) continue;
        if (el.getClientRects().length === 0) continue;
        const s = style(el);
        if (s.visibility !== 'visible' || transparent(el)) continue;
        judge(el, box, chain(el, false), ownClip(el, s, box), s.display === 'inline');
      }
      const walker = doc.createTreeWalker(body, NodeFilter.SHOW_TEXT);
      const range = doc.createRange();
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        if (!/\S/.test(n.data)) continue;
        const p = n.parentElement;
        if (!p || SKIP.has(p.tagName)) continue;
        range.selectNodeContents(n);
        const box = docRect(range.getBoundingClientRect());
        if (box.r <= iw + tol || box.l >= iw) continue;
        const s = style(p);
        if (s.visibility !== 'visible' || transparent(p)) continue;
        judge(p, box, chain(p, true), null, true);
      }
    }
    const outer = [...offenders].filter((el) => {
      for (let a = el.parentElement; a; a = a.parentElement) if (offenders.has(a)) return false;
      return true;
    });
    // scroll_width is how far the viewport can be scrolled sideways: the document's
    // scrollWidth, or innerWidth when overflow hidden/clip on html or body stops horizontal
    // scrolling (what such a page cuts off is counted in clipped_elements instead).
    return {
      scroll_width: rootScrollsX ? root.scrollWidth : iw,
      document_scroll_width: root.scrollWidth,
      inner_width: iw,
      clipped_elements: outer.length,
      clipped_offenders: outer.slice(0, P.max_offenders).map((el) => ({ selector: path(el), right: round(rights.get(el), 10) })),
    };
  };

  const norm = (s) => s.replace(/\s+/g, ' ').trim();

  // The innermost elements under scope (itself included) whose text contains text.
  const holders = (scope, text) => {
    const out = [];
    const visit = (el) => {
      if (SKIP.has(el.tagName) || !norm(el.textContent).includes(text)) return;
      let inner = false;
      for (const c of el.children) {
        if (norm(c.textContent).includes(text)) {
          inner = true;
          visit(c);
        }
      }
      if (!inner) out.push(el);
    };
    visit(scope);
    return out;
  };

  const texts = (r) => {
    const scopes = r.within ? [...doc.querySelectorAll(r.within)] : body ? [body] : [];
    const out = {};
    r.texts.forEach((t, i) => {
      const want = norm(t);
      out['text.' + i + '.visible'] = scopes.some((sc) => holders(sc, want).some((h) => visibleRect(h) !== null));
    });
    return out;
  };

  const count = (r) => {
    const els = [...doc.querySelectorAll(r.selector)];
    return { count: r.state === 'attached' ? els.length : els.filter((e) => visibleRect(e) !== null).length };
  };

  // in_viewport: the first visible match's border box in viewport coordinates.
  const box = (r) => {
    const els = [...doc.querySelectorAll(r.selector)];
    const vis = els.filter((e) => visibleRect(e) !== null);
    const el = vis[0] || els[0];
    const b = el ? el.getBoundingClientRect() : { left: 0, top: 0, right: 0, bottom: 0 };
    return { count: vis.length, left: b.left, top: b.top, right: b.right, bottom: b.bottom, inner_width: iw, inner_height: ih };
  };

  // Whether anything is rendered at all: a first paint of an empty page settles nothing.
  const hasContent = () => {
    if (!body) return false;
    const walker = doc.createTreeWalker(body, NodeFilter.SHOW_TEXT);
    const range = doc.createRange();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!/\S/.test(n.data) || !n.parentElement || SKIP.has(n.parentElement.tagName)) continue;
      range.selectNodeContents(n);
      const r = range.getBoundingClientRect();
      if (r.width > minPx && r.height > minPx && visibleRect(n.parentElement) !== null) return true;
    }
    for (const el of body.querySelectorAll('img, svg, canvas, video, iframe, input, button')) {
      if (visibleRect(el) !== null) return true;
    }
    return false;
  };

  const results = (request.reads || []).map((r) => {
    switch (r.kind) {
      case 'overflow':
        return overflow();
      case 'texts':
        return texts(r);
      case 'count':
        return count(r);
      case 'box':
        return box(r);
    }
    throw new Error('probe: unknown read ' + r.kind);
  });

  const quiet = globalThis.__signoffQuiet;
  return {
    quiet_ms: quiet ? performance.now() - quiet.last : -1,
    mutations: quiet ? quiet.mutations : -1,
    signature: {
      scroll_width: root.scrollWidth,
      scroll_height: root.scrollHeight,
      inner_width: iw,
      inner_height: ih,
      elements: doc.getElementsByTagName('*').length,
      content: request.content ? hasContent() : null,
    },
    results,
  };
}
