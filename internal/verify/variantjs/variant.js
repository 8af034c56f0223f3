// Signoff's lazy variant of a base page (contracts.Variant): the edits a lazy implementation
// would make, applied to every top-level page the verifier loads in a base check's self-test.
// Evidence measured with it names the variant and is never a verdict. Edits wait until the
// page has loaded and hydrated, and are put back when the page's own code removes them, a
// bounded number of times.
(function (spec) {
  if (window.top !== window) return;
  var mine = new WeakSet();
  var placed = [];
  var budget = 200;
  function shown(el) {
    var r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }
  function region() {
    var mains = document.querySelectorAll('main,[role="main"]');
    for (var i = 0; i < mains.length; i++) if (shown(mains[i])) return mains[i];
    return document.body;
  }
  // blocks: the main region's shown children, looking through single wrappers.
  function blocks(root) {
    var c = root;
    for (var depth = 0; depth < 8; depth++) {
      var kids = Array.prototype.filter.call(c.children, function (k) { return !mine.has(k) && shown(k); });
      if (kids.length === 1 && kids[0].children.length > 0) { c = kids[0]; continue; }
      return kids;
    }
    return [];
  }
  function onRoute(op) {
    if (!op.route) return true;
    var p = location.pathname.replace(/\/+$/, '') || '/';
    return p === (op.route.replace(/\/+$/, '') || '/');
  }
  function make(op) {
    var el = document.createElement(op.tag);
    if (op.tag === 'a') el.setAttribute('href', '#');
    if (op.tag === 'button') el.setAttribute('type', 'button');
    if (op.role) el.setAttribute('role', op.role);
    if (op.attr) el.setAttribute(op.attr, op.value || '');
    if (op.tag === 'input') el.setAttribute('aria-label', op.text || op.value || '');
    else el.textContent = op.text || op.value || '';
    mine.add(el);
    return el;
  }
  function apply() {
    if (!document.body || budget <= 0) return;
    budget--;
    var main = region();
    spec.ops.forEach(function (op, i) {
      if (!onRoute(op)) return;
      var cur = placed[i];
      if (op.op === 'hook') {
        var v = op.value || '';
        if (cur && cur.length && cur.every(function (el) { return el.isConnected && el.getAttribute(op.attr) === v; })) return;
        var els = blocks(main).slice(0, op.count || 1);
        els.forEach(function (el) { el.setAttribute(op.attr, v); });
        placed[i] = els;
      } else if (op.op === 'insert') {
        if (cur && cur.isConnected) return;
        var el = make(op);
        if (op.where === 'start') main.insertBefore(el, main.firstChild); else main.appendChild(el);
        placed[i] = el;
      } else if (op.op === 'retext') {
        if (cur && cur.isConnected && cur.textContent === op.text) return;
        var h = main.querySelector('h1') || document.querySelector('h1,h2,[role="heading"]');
        if (!h) return;
        h.textContent = op.text;
        placed[i] = h;
      }
    });
  }
  var queued = false;
  function schedule() {
    if (queued) return;
    queued = true;
    queueMicrotask(function () { queued = false; apply(); });
  }
  function start() {
    apply();
    var opts = { childList: true, subtree: true, characterData: true };
    var attrs = spec.ops.filter(function (op) { return op.attr; }).map(function (op) { return op.attr; });
    if (attrs.length) { opts.attributes = true; opts.attributeFilter = attrs; }
    new MutationObserver(schedule).observe(document.documentElement, opts);
  }
  // After the load event and a quarter second of the page's own clock, as a person's edit
  // of a finished page: a framework hydrating what the server sent has done so by then.
  function later() { setTimeout(start, 250); }
  if (document.readyState === 'complete') later();
  else window.addEventListener('load', later, { once: true });
})(__SIGNOFF_VARIANT__);
