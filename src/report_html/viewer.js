/* The grapnel HTML report's viewer (docs/html_report.md). Reads the JSON in
 * #gn-data, builds each graph's name-scope tree (scopes wider than MAXC
 * children are cut into runs of consecutive nodes, so no layout is ever
 * larger than that), lays out only the open scopes with dagre, and draws
 * SVG. `#selftest` in the address runs the check the tests read (#gn-selftest). */
(function () {
  'use strict';
  var T0 = performance.now();
  var D = JSON.parse(document.getElementById('gn-data').textContent);
  var MAXC = 60;
  var PALETTE = ['#e6550d', '#3182bd', '#31a354', '#756bb1', '#d6616b', '#17becf', '#bcbd22', '#8c564b',
    '#e377c2', '#637939', '#7b4173', '#393b79', '#ad494a', '#6b6ecf'];
  var $ = function (id) { return document.getElementById(id); };
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) { return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; });
  }

  /* ---- graphs ---------------------------------------------------------------------- */
  function mkGraph(raw, ref, side) {
    var n = raw.name.length, g = {side: side, n: n, name: raw.name, inp: raw.in, op: raw.op, dev: raw.dev,
      out: raw.out, attr: raw.attr, index: new Map(), status: new Array(n).fill(''), ev: new Array(n).fill(null),
      by: new Array(n).fill(-1), seg: null};
    if (ref && raw.same) {
      for (var i = 0; i < n; i++) {
        var j = raw.same[i];
        if (j >= 0) { g.op[i] = ref.op[j]; g.dev[i] = ref.dev[j]; g.out[i] = ref.out[j]; g.attr[i] = ref.attr[j]; }
      }
    }
    for (var k = 0; k < n; k++) g.index.set(g.name[k], k);
    g.edges = 0;
    for (var m = 0; m < n; m++) g.edges += g.inp[m].length;
    return g;
  }
  function src(x) { return Array.isArray(x) ? x[0] : (x < 0 ? -x - 1 : x); }
  function consumers(g) {
    if (g.cons) return g.cons;
    g.cons = [];
    for (var i = 0; i < g.n; i++) g.cons.push([]);
    for (var v = 0; v < g.n; v++) g.inp[v].forEach(function (x) { g.cons[src(x)].push(v); });
    return g.cons;
  }
  var B = mkGraph(D.before, null, 'before');
  var A = D.after ? mkGraph(D.after, B, 'after') : null;

  /* ---- rewrites: each event placed on its node; removed and made nodes given to the
   * rewrite nearest to them among the touched nodes ------------------------------------- */
  var report = D.report || {passes: [], events: [], notes: []};
  var events = report.events;
  var passOrder = [];
  /* pattern ids start with the pass id, which for two passes is shorter than the pass's name */
  var ALIAS = {common_subgraph_elimination: 'cse', implementation_selector: 'impl_selector'};
  function passId(name) { return ALIAS[name] || name; }
  function passOf(pattern) { var d = pattern.indexOf('.'); return d < 0 ? pattern : pattern.slice(0, d); }
  if (D.kind === 'bisect' && D.bisect_pass) { /* only what the first disagreeing pass did */
    var bm = /^\d+_it(\d+)_(.*)$/.exec(D.bisect_pass);
    if (bm) events = events.filter(function (e) { return e.iteration === +bm[1] && passOf(e.pattern) === passId(bm[2]); });
  }
  report.passes.forEach(function (p) { if (passOrder.indexOf(passId(p.pass)) < 0) passOrder.push(passId(p.pass)); });
  events.forEach(function (e) { var p = passOf(e.pattern); if (passOrder.indexOf(p) < 0) passOrder.push(p); });
  function colour(pass) { var i = passOrder.indexOf(pass); return i < 0 ? '#888' : PALETTE[i % PALETTE.length]; }
  var placed = 0, unplaced = 0;
  events.forEach(function (e, k) {
    e.k = k; e.removed = []; e.made = []; e.placed = false;
    if (e.item !== 'main') return;
    [B, A].forEach(function (g) {
      if (!g) return;
      var i = g.index.get(e.node);
      if (i === undefined) return;
      (g.ev[i] || (g.ev[i] = [])).push(k);
      e.placed = true;
    });
    if (e.kind === 'rewrote') { if (e.placed) placed++; else unplaced++; }
  });
  function mark(g, other, gone) {
    for (var i = 0; i < g.n; i++) {
      var j = other.index.get(g.name[i]);
      if (j === undefined) g.status[i] = gone;
      else if (g === A && D.after.same[i] < 0) g.status[i] = 'changed';
      else if (g === B && D.after.same[j] < 0) g.status[i] = 'changed';
      if (!g.status[i] && g.ev[i] && g.ev[i].every(function (k) { return events[k].kind === 'refused'; }))
        g.status[i] = 'refused';
    }
  }
  function firstRewrite(g, i) {
    var l = g.ev[i];
    if (!l) return -1;
    for (var t = 0; t < l.length; t++) if (events[l[t]].kind === 'rewrote') return l[t];
    return -1;
  }
  var rewriteOf = new Map();   /* node name -> its first rewrite */
  events.forEach(function (e, k) { if (e.kind === 'rewrote' && e.item === 'main' && !rewriteOf.has(e.node)) rewriteOf.set(e.node, k); });
  function attribute(g) {
    var cons = consumers(g);
    for (var i = 0; i < g.n; i++) {
      var st = g.status[i];
      if (st !== 'removed' && st !== 'made' && st !== 'changed') continue;
      var k = firstRewrite(g, i);
      if (k < 0 && st === 'made') { /* new nodes are named "<node replaced>/<suffix>" */
        for (var cut = g.name[i].lastIndexOf('/'); k < 0 && cut > 0; cut = g.name[i].lastIndexOf('/', cut - 1)) {
          var kk = rewriteOf.get(g.name[i].slice(0, cut));
          if (kk !== undefined) k = kk;
        }
      }
      if (k < 0) { /* breadth-first through touched neighbours, at most 4 steps */
        var seen = new Set([i]), front = [i];
        for (var d = 0; d < 4 && k < 0 && front.length; d++) {
          var next = [];
          for (var f = 0; f < front.length && k < 0; f++) {
            var nb = g.inp[front[f]].map(src).concat(cons[front[f]]);
            for (var q = 0; q < nb.length; q++) {
              var v = nb[q];
              if (seen.has(v)) continue;
              seen.add(v);
              k = firstRewrite(g, v);
              /* a rewrite whose own node went away (an Identity bypassed) removed only that node */
              if (k >= 0 && A && !A.index.has(events[k].node)) k = -1;
              if (k >= 0) break;
              if (g.status[v] === 'removed' || g.status[v] === 'made' || g.status[v] === 'changed') next.push(v);
            }
          }
          front = next;
        }
      }
      g.by[i] = k;
      if (k >= 0 && st === 'removed') events[k].removed.push(i);
      if (k >= 0 && st === 'made') events[k].made.push(i);
    }
  }
  if (A) { mark(B, A, 'removed'); mark(A, B, 'made'); attribute(B); attribute(A); }
  function nodePass(g, i) {
    var k = g.by[i] >= 0 ? g.by[i] : (g.ev[i] ? g.ev[i][0] : -1);
    return k >= 0 ? passOf(events[k].pattern) : '';
  }

  /* ---- segment: engines and refusals from gn_segment's text report ---------------------- */
  var engines = [], excluded = [];
  if (D.segment_report) {
    D.segment_report.split('\n').forEach(function (line) {
      var m = /^engine (\S+)[^:]*: (\d+) node\(s\)[^:]*: (.*)$/.exec(line);
      if (m) { engines.push({name: m[1], count: +m[2], members: m[3].split(' ')}); return; }
      m = /^not converted: (.+?) \(([^)]*)\): (.*)$/.exec(line);
      if (m) excluded.push({node: m[1], op: m[2], reason: m[3]});
    });
    B.seg = new Array(B.n).fill(-1);
    engines.forEach(function (e, ei) {
      e.colour = PALETTE[ei % PALETTE.length];
      e.members.forEach(function (nm) { var i = B.index.get(nm); if (i !== undefined) B.seg[i] = ei; });
    });
    B.why = new Map();
    excluded.forEach(function (x) { B.why.set(x.node, x.reason); var i = B.index.get(x.node); if (i !== undefined) B.status[i] = 'refused'; });
  }

  /* ---- name-scope trees ---------------------------------------------------------------- */
  var uidNext = 0;
  function tnode(label, parent, leaf, first) {
    return {u: uidNext++, label: label, parent: parent, kids: leaf < 0 ? [] : null, leaf: leaf, first: first,
      size: leaf < 0 ? 0 : 1, depth: parent ? parent.depth + 1 : 0, open: false, lay: null, edges: null, tally: null};
  }
  function buildTree(g) {
    var root = tnode('', null, -1, 0), groups = new Map(), all = [root];
    root.open = true;
    g.leafOf = new Array(g.n);
    for (var i = 0; i < g.n; i++) {
      var nm = g.name[i], p = root, pos = 0, k = nm.indexOf('/');
      while (k >= 0) {
        var key = nm.slice(0, k), c = groups.get(key);
        if (!c) { c = tnode(nm.slice(pos, k), p, -1, i); groups.set(key, c); p.kids.push(c); all.push(c); c.path = key; }
        p = c; pos = k + 1; k = nm.indexOf('/', pos);
      }
      var leaf = tnode(nm.slice(pos), p, i, i);
      p.kids.push(leaf);
      g.leafOf[i] = leaf;
    }
    /* wide scopes: runs of consecutive nodes, MAXC at most per level */
    for (var a = 0; a < all.length; a++) {
      var G = all[a];
      while (G.kids.length > MAXC) {
        G.kids.sort(function (x, y) { return x.first - y.first; });
        var per = Math.ceil(G.kids.length / Math.ceil(G.kids.length / MAXC)), kids = [];
        for (var s = 0; s < G.kids.length; s += per) {
          var run = G.kids.slice(s, s + per);
          if (run.length === 1) { kids.push(run[0]); continue; }
          var lo = run[0].lo || run[0].label, hi = run[run.length - 1].hi || run[run.length - 1].label;
          var R = tnode(lo + ' \u2026 ' + hi, G, -1, run[0].first);
          R.run = true; R.kids = run; R.lo = lo; R.hi = hi;
          run.forEach(function (x) { x.parent = R; });
          kids.push(R);
        }
        G.kids = kids;
      }
    }
    (function fix(T, d) { /* depths after the runs went in; sizes */
      var st = [T];
      T.depth = d;
      while (st.length) {
        var x = st.pop();
        if (!x.kids) continue;
        x.kids.forEach(function (c) { c.depth = x.depth + 1; st.push(c); });
      }
    })(root, 0);
    for (var l = 0; l < g.n; l++) for (var q = g.leafOf[l].parent; q; q = q.parent) q.size++;
    /* what touched each scope: counts by status and by pass */
    for (var t = 0; t < g.n; t++) {
      var st2 = g.status[t], ps = nodePass(g, t), eng = g.seg ? g.seg[t] : -1;
      if (!st2 && eng < 0) continue;
      for (var r = g.leafOf[t].parent; r; r = r.parent) {
        var ty = r.tally || (r.tally = {removed: 0, made: 0, changed: 0, refused: 0, pass: {}, eng: {}});
        if (st2) ty[st2]++;
        if (ps && st2 !== 'refused') ty.pass[ps] = (ty.pass[ps] || 0) + 1;
        if (eng >= 0) ty.eng[eng] = (ty.eng[eng] || 0) + 1;
      }
    }
    g.root = root;
    return root;
  }
  buildTree(B);
  if (A) buildTree(A);

  /* the child of G holding tree node x (x under G), or null */
  function childOf(x, G) {
    while (x && x.depth > G.depth + 1) x = x.parent;
    return x && x.parent === G ? x : null;
  }
  function leavesUnder(G, out) {
    var st = [G];
    while (st.length) { var x = st.pop(); if (x.kids) x.kids.forEach(function (c) { st.push(c); }); else out.push(x.leaf); }
    return out;
  }
  /* edges between G's children, from the node edges inside G (cached: structural) */
  function groupEdges(g, G) {
    if (G.edges) return G.edges;
    var m = new Map();
    leavesUnder(G, []).forEach(function (v) {
      var cv = childOf(g.leafOf[v], G);
      g.inp[v].forEach(function (x) {
        var cu = childOf(g.leafOf[src(x)], G);
        if (!cu || cu === cv) return;
        var key = cu.u + ',' + cv.u, e = m.get(key);
        if (!e) m.set(key, e = {a: cu, b: cv, n: 0, ctrl: true});
        e.n++;
        if (!(typeof x === 'number' && x < 0)) e.ctrl = false;
      });
    });
    G.edges = Array.from(m.values());
    return G.edges;
  }

  /* ---- layout ------------------------------------------------------------------------- */
  var HEAD = 22, PAD = 10;
  function leafSize(g, x) {
    var w = Math.max(x.label.length, (g.op[x.leaf] || '').length * 0.85) * 6.6 + 18;
    return {w: Math.min(Math.max(w, 56), 230), h: 34};
  }
  function boxSize(g, x) {
    if (!x.kids) return leafSize(g, x);
    if (x.open) { var L = layout(g, x); return {w: L.w, h: L.h + HEAD}; }
    return {w: Math.min(Math.max(x.label.length * 6.8 + 50, 90), 280), h: 40};
  }
  function layout(g, G) {
    if (G.lay) return G.lay;
    var dg = new dagre.graphlib.Graph();
    dg.setGraph({rankdir: 'TB', nodesep: 14, ranksep: 26, edgesep: 6, marginx: PAD, marginy: PAD});
    dg.setDefaultEdgeLabel(function () { return {}; });
    G.kids.forEach(function (c) { var s = boxSize(g, c); dg.setNode(String(c.u), {width: s.w, height: s.h}); });
    var es = groupEdges(g, G);
    es.forEach(function (e) { dg.setEdge(String(e.a.u), String(e.b.u)); });
    dagre.layout(dg);
    var pos = new Map();
    G.kids.forEach(function (c) { var v = dg.node(String(c.u)); pos.set(c.u, {x: v.x - v.width / 2, y: v.y - v.height / 2, w: v.width, h: v.height}); });
    var lines = es.map(function (e) { return {e: e, pts: dg.edge(String(e.a.u), String(e.b.u)).points}; });
    var gr = dg.graph();
    G.lay = {w: Math.max(gr.width || 0, 60), h: Math.max(gr.height || 0, 30), pos: pos, lines: lines};
    return G.lay;
  }
  function dirty(x) { for (; x; x = x.parent) x.lay = null; }

  /* ---- drawing ------------------------------------------------------------------------ */
  function tallyBar(T, w, h) {
    var t = T.tally;
    if (!t) return '';
    var s = '', keys, tot = 0, x = 1;
    if (t.eng && Object.keys(t.eng).length) {
      keys = Object.keys(t.eng);
      keys.forEach(function (k) { tot += t.eng[k]; });
      keys.forEach(function (k) { var ww = (w - 2) * t.eng[k] / tot; s += '<rect x="' + x + '" y="' + (h - 6) + '" width="' + ww + '" height="5" fill="' + engines[k].colour + '"/>'; x += ww; });
    } else {
      keys = Object.keys(t.pass);
      keys.forEach(function (k) { tot += t.pass[k]; });
      keys.forEach(function (k) { var ww = (w - 2) * t.pass[k] / tot; s += '<rect x="' + x + '" y="' + (h - 6) + '" width="' + ww + '" height="5" fill="' + colour(k) + '"/>'; x += ww; });
    }
    var b = '';
    if (t.removed) b += '<tspan class="badge rm">\u2212' + t.removed + '</tspan> ';
    if (t.made) b += '<tspan class="badge mk">+' + t.made + '</tspan>';
    if (b) s += '<text x="' + (w - 6) + '" y="' + (T.open ? 15 : 30) + '" text-anchor="end">' + b + '</text>';
    return s;
  }
  function short(s, n) { return s.length > n ? s.slice(0, n - 1) + '\u2026' : s; }
  function drawNode(g, x, p, out) {
    if (!x.kids) {
      var i = x.leaf, st = g.status[i], ps = nodePass(g, i), fill = '';
      if (g.seg && g.seg[i] >= 0) fill = engines[g.seg[i]].colour;
      else if (ps && st && st !== 'refused') fill = colour(ps);
      out.push('<g class="n leaf' + (st ? ' st-' + st : '') + '" data-u="' + x.u + '" transform="translate(' + p.x + ',' + p.y + ')">' +
        '<rect width="' + p.w + '" height="' + p.h + '" rx="5"' + (fill ? ' style="fill:' + fill + '33"' : '') + '/>' +
        '<text x="' + p.w / 2 + '" y="14" text-anchor="middle">' + esc(short(x.label, 32)) + '</text>' +
        '<text class="op" x="' + p.w / 2 + '" y="27" text-anchor="middle">' + esc(short(g.op[i], 32)) + '</text></g>');
      return;
    }
    var cls = 'n grp' + (x.open ? ' open' : '');
    out.push('<g class="' + cls + '" data-u="' + x.u + '" transform="translate(' + p.x + ',' + p.y + ')">' +
      '<rect class="box" width="' + p.w + '" height="' + p.h + '" rx="8"/>' +
      '<text x="8" y="15">' + (x.open ? '\u25be ' : '\u25b8 ') + esc(short(x.label, 40)) + '</text>' +
      (x.open ? '' : '<text class="cnt" x="8" y="30">' + x.size + ' node' + (x.size === 1 ? '' : 's') + '</text>') +
      tallyBar(x, p.w, x.open ? HEAD : p.h));
    if (x.open) { out.push('<g transform="translate(0,' + HEAD + ')">'); drawInside(g, x, out); out.push('</g>'); }
    out.push('</g>');
  }
  function drawInside(g, G, out) {
    var L = layout(g, G);
    L.lines.forEach(function (l) {
      var d = 'M' + l.pts.map(function (q) { return q.x.toFixed(1) + ',' + q.y.toFixed(1); }).join('L');
      out.push('<path class="e' + (l.e.ctrl ? ' ctrl' : '') + (l.e.n > 1 ? ' w' : '') + '" d="' + d + '" marker-end="url(#arr)"/>');
    });
    G.kids.forEach(function (c) { drawNode(g, c, L.pos.get(c.u), out); });
  }

  /* ---- panes: pan, zoom, clicks ------------------------------------------------------- */
  function Pane(g, el) {
    this.g = g; this.el = el; this.svg = el.querySelector('svg'); this.tx = 10; this.ty = 10; this.s = 1; this.sel = -1;
    this.byU = new Map();
    var self = this;
    (function index(x) { self.byU.set(x.u, x); if (x.kids) x.kids.forEach(index); })(g.root);
    el.querySelector('.count').textContent = g.n + ' nodes, ' + g.edges + ' edges';
    var drag = null;
    this.svg.addEventListener('mousedown', function (ev) { drag = {x: ev.clientX, y: ev.clientY, tx: self.tx, ty: self.ty, moved: false}; });
    window.addEventListener('mousemove', function (ev) {
      if (!drag) return;
      var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      self.tx = drag.tx + dx; self.ty = drag.ty + dy; self.apply();
    });
    window.addEventListener('mouseup', function () { if (drag && drag.moved) self.justDragged = true; drag = null; });
    this.svg.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var r = self.svg.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
      var f = Math.exp(-ev.deltaY * 0.0015), ns = Math.min(4, Math.max(0.02, self.s * f));
      self.tx = mx - (mx - self.tx) * ns / self.s; self.ty = my - (my - self.ty) * ns / self.s; self.s = ns; self.apply();
    }, {passive: false});
    this.svg.addEventListener('click', function (ev) {
      if (self.justDragged) { self.justDragged = false; return; }
      var t = ev.target.closest ? ev.target.closest('[data-u]') : null;
      if (!t) return;
      var x = self.byU.get(+t.getAttribute('data-u'));
      if (x.kids) {
        /* a click on a folded box opens it; on an open box's header folds it */
        if (!x.open || ev.target.tagName === 'text') { x.open = !x.open; dirty(x); self.render(); }
        showScope(self, x);
      } else {
        self.select(x.leaf);
        showNode(self, x.leaf);
      }
    });
    el.querySelectorAll('.tools button').forEach(function (b) {
      b.addEventListener('click', function () {
        var act = b.getAttribute('data-act');
        if (act === 'fit') self.fit();
        else { self.setAll(act === 'expand'); self.render(); self.fit(); }
      });
    });
  }
  Pane.prototype.apply = function () { if (this.vp) this.vp.setAttribute('transform', 'translate(' + this.tx + ',' + this.ty + ') scale(' + this.s + ')'); };
  Pane.prototype.render = function () {
    var out = ['<defs><marker id="arr" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto">' +
      '<path d="M0,0L8,4L0,8z" fill="#8b95a8"/></marker></defs><g class="vp">'];
    drawInside(this.g, this.g.root, out);
    out.push('</g>');
    this.svg.innerHTML = out.join('');
    this.vp = this.svg.querySelector('.vp');
    this.apply();
    if (this.sel >= 0) this.select(this.sel);
  };
  Pane.prototype.setAll = function (open) {
    var self = this;
    this.byU.forEach(function (x) { if (x.kids && x !== self.g.root) { x.open = open; x.lay = null; } });
    this.g.root.lay = null;
  };
  Pane.prototype.fit = function () {
    var L = layout(this.g, this.g.root), r = this.svg.getBoundingClientRect();
    var W = r.width || 600, H = r.height || 400;
    this.s = Math.min(1.2, Math.max(0.05, Math.min(W / (L.w + 20), H / (L.h + 20))));
    this.tx = (W - L.w * this.s) / 2; this.ty = 10; this.apply();
  };
  /* the absolute box of tree node x, when drawn */
  Pane.prototype.boxOf = function (x) {
    var chain = [];
    for (var y = x; y.parent; y = y.parent) chain.push(y);
    var ox = 0, oy = 0, b = null;
    for (var k = chain.length - 1; k >= 0; k--) {
      var P = chain[k].parent, L = P.lay;
      if (!L) return null;
      if (P !== this.g.root) oy += HEAD;
      b = L.pos.get(chain[k].u);
      ox += b.x; oy += b.y;
    }
    return b ? {x: ox, y: oy, w: b.w, h: b.h} : null;
  };
  Pane.prototype.reveal = function (i) {
    var x = this.g.leafOf[i];
    for (var p = x.parent; p; p = p.parent) if (!p.open) { p.open = true; dirty(p); }
    this.render();
    var b = this.boxOf(x), r = this.svg.getBoundingClientRect();
    if (b) {
      this.s = Math.max(this.s, 0.8);
      this.tx = (r.width || 600) / 2 - (b.x + b.w / 2) * this.s; this.ty = (r.height || 400) / 2 - (b.y + b.h / 2) * this.s; this.apply();
    }
    this.select(i);
    return this.elementOf(i);
  };
  Pane.prototype.elementOf = function (i) { return this.svg.querySelector('[data-u="' + this.g.leafOf[i].u + '"]'); };
  Pane.prototype.select = function (i) {
    var old = this.svg.querySelector('.sel');
    if (old) old.classList.remove('sel');
    this.sel = i;
    var el = this.elementOf(i);
    if (el) el.classList.add('sel');
  };

  /* ---- side panel ------------------------------------------------------------------- */
  function evHtml(k) {
    var e = events[k], p = passOf(e.pattern);
    return '<div class="ev ' + e.kind + '" style="border-left-color:' + colour(p) + '"><span class="pat">' + esc(e.pattern) +
      '</span> ' + e.kind + ' (iteration ' + e.iteration + ')<br>' + esc(e.detail) +
      (e.removed.length ? '<br>removed ' + e.removed.length + ' node(s)' : '') + (e.made.length ? '<br>made ' + e.made.map(function (i) { return goLink(A, i); }).join(', ') : '') + '</div>';
  }
  function goLink(g, i) { return '<a class="go" data-side="' + g.side + '" data-i="' + i + '">' + esc(g.name[i]) + '</a>'; }
  function showNode(pane, i) {
    var g = pane.g, o = g === B ? A : B, h = [];
    h.push('<h3>' + esc(g.name[i]) + '</h3><table>');
    h.push('<tr><td>graph</td><td>' + g.side + (g.status[i] ? ' \u2014 <b>' + g.status[i] + '</b>' : '') + '</td></tr>');
    h.push('<tr><td>op</td><td><b>' + esc(g.op[i]) + '</b></td></tr>');
    if (g.dev[i]) h.push('<tr><td>device</td><td>' + esc(g.dev[i]) + '</td></tr>');
    if (g.out[i]) h.push('<tr><td>outputs</td><td>' + esc(g.out[i]).split('; ').join('<br>') + '</td></tr>');
    h.push('</table>');
    if (g.seg && g.seg[i] >= 0) h.push('<h4>engine</h4><span class="chip" style="background:' + engines[g.seg[i]].colour + '"></span>' + esc(engines[g.seg[i]].name));
    if (g.why && g.why.has(g.name[i])) h.push('<h4>not converted</h4>' + esc(g.why.get(g.name[i])));
    var evs = (g.ev[i] || []).slice();
    if (g.by[i] >= 0 && evs.indexOf(g.by[i]) < 0) evs.unshift(g.by[i]);
    if (evs.length) {
      h.push('<h4>rewrites and refusals</h4>');
      if (g.by[i] >= 0 && (g.ev[i] || []).indexOf(g.by[i]) < 0)
        h.push('<div class="hint">' + (g.status[i] === 'removed' ? 'removed by' : 'made by') + ' the rewrite of ' + esc(events[g.by[i]].node) + ':</div>');
      evs.forEach(function (k) { h.push(evHtml(k)); });
    }
    if (o && o.index.has(g.name[i])) h.push('<h4>' + o.side + '</h4>' + goLink(o, o.index.get(g.name[i])));
    h.push('<h4>inputs</h4>' + (g.inp[i].map(function (x) {
      var j = src(x);
      return (typeof x === 'number' && x < 0 ? '^' : '') + goLink(g, j) + (Array.isArray(x) ? ':' + x[1] : '');
    }).join('<br>') || '<span class="hint">none</span>'));
    h.push('<h4>consumers</h4>' + (consumers(g)[i].slice(0, 50).map(function (j) { return goLink(g, j); }).join('<br>') || '<span class="hint">none</span>'));
    if (g.attr[i]) h.push('<h4>attrs</h4><pre>' + esc(g.attr[i]) + '</pre>');
    $('info').innerHTML = h.join('');
  }
  function showScope(pane, x) {
    var g = pane.g, ops = new Map(), evs = [];
    leavesUnder(x, []).forEach(function (i) { ops.set(g.op[i], (ops.get(g.op[i]) || 0) + 1); (g.ev[i] || []).forEach(function (k) { evs.push(k); }); });
    var h = ['<h3>' + esc(x.path || x.label) + '</h3><div>' + x.size + ' nodes in the ' + g.side + ' graph' + (x.run ? ' (a run of consecutive nodes of a wide scope)' : '') + '</div>'];
    var t = x.tally;
    if (t) h.push('<div>' + [t.removed && t.removed + ' removed', t.made && t.made + ' made', t.changed && t.changed + ' changed', t.refused && t.refused + ' refused'].filter(Boolean).join(', ') + '</div>');
    h.push('<h4>ops</h4><table>' + Array.from(ops).sort(function (a, b) { return b[1] - a[1]; }).slice(0, 12).map(function (o) { return '<tr><td>' + esc(o[0]) + '</td><td>' + o[1] + '</td></tr>'; }).join('') + '</table>');
    if (evs.length) h.push('<h4>rewrites and refusals (' + evs.length + ')</h4>' + evs.slice(0, 40).map(evHtml).join(''));
    $('info').innerHTML = h.join('');
  }
  document.addEventListener('click', function (ev) {
    var a = ev.target.closest ? ev.target.closest('a.go') : null;
    if (!a) return;
    var pane = a.getAttribute('data-side') === 'after' ? PA : PB, i = +a.getAttribute('data-i');
    if (view === 'summary' || (view !== 'both' && view !== pane.g.side)) setView('both');
    pane.reveal(i);
    showNode(pane, i);
  });

  /* ---- summary ---------------------------------------------------------------------- */
  function chart(runs) {
    var W = 760, H = 190, L = 50, n = runs.length;
    if (!n) return '';
    var mx = 0;
    runs.forEach(function (r) { mx = Math.max(mx, r.nodes_before, r.nodes_after, r.edges_before, r.edges_after); });
    var X = function (i) { return L + (W - L - 10) * i / Math.max(1, n); }, Y = function (v) { return H - 40 - (H - 60) * v / (mx || 1); };
    var s = '<svg class="chart" width="' + W + '" height="' + H + '"><line class="ax" x1="' + L + '" y1="' + Y(0) + '" x2="' + W + '" y2="' + Y(0) + '"/>';
    s += '<text x="' + (L - 4) + '" y="' + (Y(mx) + 4) + '" text-anchor="end">' + mx + '</text><text x="' + (L - 4) + '" y="' + Y(0) + '" text-anchor="end">0</text>';
    ['nodes', 'edges'].forEach(function (what, w) {
      var d = 'M' + X(0) + ',' + Y(runs[0][what + '_before']);
      runs.forEach(function (r, i) { d += 'L' + X(i + 1) + ',' + Y(r[what + '_after']); });
      s += '<path class="ln" d="' + d + '" stroke="' + (w ? '#9aa5b8' : '#3182bd') + '"/>';
    });
    runs.forEach(function (r, i) {
      s += '<circle cx="' + X(i + 1) + '" cy="' + Y(r.nodes_after) + '" r="3.5" fill="' + colour(passId(r.pass)) + '"><title>' + esc(r.pass) + ' (iteration ' + r.iteration + '): ' + r.nodes_before + ' \u2192 ' + r.nodes_after + ' nodes, ' + r.edges_before + ' \u2192 ' + r.edges_after + ' edges</title></circle>';
      if (r.nodes_after !== r.nodes_before) s += '<text x="' + X(i + 1) + '" y="' + (H - 26) + '" transform="rotate(35 ' + X(i + 1) + ',' + (H - 26) + ')">' + esc(r.pass) + '</text>';
    });
    s += '<text x="' + (W - 150) + '" y="14" fill="#3182bd">\u2014 nodes</text><text x="' + (W - 80) + '" y="14">\u2014 edges</text>';
    return s + '</svg>';
  }
  function table(head, rows, numFrom) {
    return '<table><tr>' + head.map(function (h, i) { return '<th' + (i >= numFrom ? ' class="num"' : '') + '>' + h + '</th>'; }).join('') + '</tr>' +
      rows.map(function (r) { return '<tr>' + r.map(function (c, i) { return '<td' + (i >= numFrom ? ' class="num"' : '') + '>' + c + '</td>'; }).join('') + '</tr>'; }).join('') + '</table>';
  }
  function renderSummary() {
    var h = [], main = report.passes.filter(function (r) { return r.item === 'main'; });
    if (main.length) {
      h.push('<h2>Nodes and edges after each pass (main graph)</h2>' + chart(main));
      var per = new Map();
      report.passes.forEach(function (r) {
        var p = per.get(passId(r.pass)) || {us: 0, runs: 0, changed: 0};
        p.us += r.micros; p.runs++; p.changed += r.changed ? 1 : 0; per.set(passId(r.pass), p);
      });
      h.push('<h2>Time per pass</h2>' + table(['pass', 'runs', 'changed', 'ms'], Array.from(per).map(function (e) {
        return ['<span class="chip" style="background:' + colour(e[0]) + '"></span>' + esc(e[0]), e[1].runs, e[1].changed, (e[1].us / 1000).toFixed(3)];
      }), 1));
    }
    var pat = new Map();
    events.forEach(function (e) { var c = pat.get(e.pattern) || [0, 0]; c[e.kind === 'refused' ? 1 : 0]++; pat.set(e.pattern, c); });
    if (pat.size) h.push('<h2>Rewrites and refusals per pattern</h2>' + table(['pattern', 'rewrites', 'refusals'], Array.from(pat).sort().map(function (e) {
      return ['<span class="chip" style="background:' + colour(passOf(e[0])) + '"></span>' + esc(e[0]), e[1][0], e[1][1]];
    }), 1));
    var why = new Map();
    events.forEach(function (e) {
      if (e.kind !== 'refused') return;
      var key = e.pattern + '\u0000' + e.detail.replace(/'[^']*'/g, "'\u2026'").replace(/\d+/g, 'N');
      var w = why.get(key) || {n: 0, e: e};
      w.n++; why.set(key, w);
    });
    if (why.size) h.push('<h2>Refusals by reason</h2>' + table(['pattern', 'reason (names and numbers folded)', 'count', 'e.g.'], Array.from(why.values()).sort(function (a, b) { return b.n - a.n; }).map(function (w) {
      var i = A && A.index.has(w.e.node) ? A.index.get(w.e.node) : B.index.get(w.e.node);
      var g = A && A.index.has(w.e.node) ? A : B;
      return [esc(w.e.pattern), esc(w.e.detail.replace(/'[^']*'/g, "'\u2026'")), w.n, i === undefined ? esc(w.e.node) : goLink(g, i)];
    }), 2));
    if (engines.length || excluded.length) {
      h.push('<h2>Engines</h2>' + table(['engine', 'nodes'], engines.map(function (e) { return ['<span class="chip" style="background:' + e.colour + '"></span>' + esc(e.name), e.count]; }), 1));
      h.push('<h2>Nodes left out of engines</h2>' + table(['node', 'op', 'reason'], excluded.map(function (x) {
        var i = B.index.get(x.node); return [i === undefined ? esc(x.node) : goLink(B, i), esc(x.op), esc(x.reason)];
      }), 3));
    }
    if (report.notes && report.notes.length) h.push('<h2>Notes</h2>' + report.notes.map(function (n) { return '<div>' + esc(n) + '</div>'; }).join(''));
    $('summary').innerHTML = h.join('') || '<p class="hint">No optimizer report in this page.</p>';
  }

  /* ---- header, legend, search, views --------------------------------------------------- */
  $('kind').textContent = D.kind;
  $('title').textContent = D.title;
  var nRew = events.filter(function (e) { return e.kind === 'rewrote'; }).length, nRef = events.length - nRew;
  var ban = '<span class="stat"><b>' + B.n + '</b> nodes before</span>' + (A ? '<span class="stat"><b>' + A.n + '</b> after</span>' : '') +
    (D.report ? '<span class="stat"><b>' + nRew + '</b> rewrites</span><span class="stat"><b>' + nRef + '</b> refusals</span><span class="stat">' + (report.total_micros / 1000).toFixed(1) + ' ms</span>' : '');
  if (D.kind === 'bisect') ban = (D.bisect_pass ? '<b>First disagreeing pass: ' + esc(D.bisect_pass) + '</b> \u2014 the graphs before and after it. ' : '<b>Every pass agrees.</b> ') + ban;
  if (D.kind === 'segment') ban += '<span class="stat"><b>' + engines.length + '</b> engine(s)</span><span class="stat"><b>' + excluded.length + '</b> node(s) left out</span>';
  $('banner').innerHTML = ban;
  var leg = ['<b>Legend</b>', '<div><span class="chip" style="border:2px dashed #c0392b"></span>removed (before)</div>',
    '<div><span class="chip" style="border:2px solid #1e8449"></span>made (after)</div>',
    '<div><span class="chip" style="border:2px solid #b9770e"></span>changed (op, attrs or shapes)</div>',
    '<div><span class="chip" style="border:2px dotted #7d3c98"></span>refused / not converted</div>'];
  passOrder.forEach(function (p) { if (events.some(function (e) { return passOf(e.pattern) === p; })) leg.push('<div><span class="chip" style="background:' + colour(p) + '"></span>' + esc(p) + '</div>'); });
  engines.forEach(function (e) { leg.push('<div><span class="chip" style="background:' + e.colour + '"></span>' + esc(e.name) + '</div>'); });
  $('legend').innerHTML = leg.join('');

  var PB = new Pane(B, $('pane-before')), PA = A ? new Pane(A, $('pane-after')) : null;
  if (!A) { $('pane-after').hidden = true; document.querySelector('[data-view="both"]').textContent = 'Graph'; document.querySelector('[data-view="after"]').hidden = true; }
  var view = 'both', summaryDone = false;
  function setView(v) {
    view = v;
    document.querySelectorAll('#views button').forEach(function (b) { b.classList.toggle('on', b.getAttribute('data-view') === v); });
    $('pane-before').hidden = !(v === 'both' || v === 'before');
    $('pane-after').hidden = !A || !(v === 'both' || v === 'after');
    $('summary').hidden = v !== 'summary';
    if (v === 'summary' && !summaryDone) { renderSummary(); summaryDone = true; }
  }
  document.querySelectorAll('#views button').forEach(function (b) { b.addEventListener('click', function () { setView(b.getAttribute('data-view')); }); });
  var timer = 0;
  function search(q) {
    q = q.trim().toLowerCase();
    if (!q) { $('results').innerHTML = ''; return; }
    var res = [], LIM = 150;
    [B, A].forEach(function (g) {
      if (!g) return;
      for (var i = 0; i < g.n && res.length < LIM; i++)
        if (g.name[i].toLowerCase().indexOf(q) >= 0 || g.op[i].toLowerCase() === q) res.push([g, i, g.op[i]]);
    });
    events.forEach(function (e) {
      if (res.length >= LIM || e.pattern.toLowerCase().indexOf(q) < 0) return;
      var g = A && A.index.has(e.node) ? A : B, i = g.index.get(e.node);
      if (i !== undefined) res.push([g, i, e.pattern]);
    });
    $('results').innerHTML = '<b>' + (res.length >= LIM ? LIM + '+' : res.length) + ' match(es)</b>' + res.map(function (r) {
      return '<div>[' + r[0].side + '] ' + goLink(r[0], r[1]) + ' <span class="hint">' + esc(r[2]) + '</span></div>';
    }).join('');
  }
  $('search').addEventListener('input', function (ev) { clearTimeout(timer); timer = setTimeout(function () { search(ev.target.value); }, 150); });

  /* first paint: the top level of each graph */
  PB.render(); PB.fit();
  if (PA) { PA.render(); PA.fit(); }
  var tFirst = performance.now();
  document.body.setAttribute('data-first-render-ms', (tFirst - T0).toFixed(1));
  requestAnimationFrame(function () { document.body.setAttribute('data-first-frame-ms', performance.now().toFixed(1)); });

  /* ---- options in the address: #select=NAME (after graph, else before; shown in both), #open=all,
   * #view=summary,
   * #selftest (the tests' check, written into #gn-selftest as JSON) ---------------------- */
  var opts = {};
  location.hash.slice(1).split('&').forEach(function (kv) { if (!kv) return; var e = kv.indexOf('='); opts[decodeURIComponent(e < 0 ? kv : kv.slice(0, e))] = e < 0 ? '' : decodeURIComponent(kv.slice(e + 1)); });
  if (opts.open === 'all') [PB, PA].forEach(function (p) { if (p) { p.setAll(true); p.render(); p.fit(); } });
  function clickNode(pane, i) {
    var el = pane.reveal(i);
    if (el) el.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));
    return !!el;
  }
  if (opts.select) { /* shown in both graphs where it is in both; the panel shows the after one */
    var sp = PA && PA.g.index.has(opts.select) ? PA : PB, si = sp.g.index.get(opts.select);
    if (sp === PA && PB.g.index.has(opts.select)) PB.reveal(PB.g.index.get(opts.select));
    if (si !== undefined) clickNode(sp, si);
  }
  if (opts.view) setView(opts.view);
  if ('selftest' in opts) {
    var r = {before: B.n, after: A ? A.n : 0, edges_before: B.edges, edges_after: A ? A.edges : 0,
      rewrites: nRew, refusals: nRef, rewrites_placed: placed, rewrites_unplaced: unplaced,
      removed: B.status.filter(function (s) { return s === 'removed'; }).length,
      made: A ? A.status.filter(function (s) { return s === 'made'; }).length : 0,
      engines: engines.length, excluded: excluded.length, first_render_ms: +(tFirst - T0).toFixed(1)};
    var tx = performance.now();
    [PB, PA].forEach(function (p) {
      if (!p) return;
      p.setAll(true); p.render();
      r['open_all_ms_' + p.g.side] = +(performance.now() - tx).toFixed(1);
      tx = performance.now();
      r['drawn_' + p.g.side] = p.svg.querySelectorAll('g.leaf').length;
      r['drawn_marked_' + p.g.side] = p.svg.querySelectorAll('g.leaf.st-removed, g.leaf.st-made, g.leaf.st-changed').length;
    });
    /* click a node a fusion made: the first remapper rewrite whose node is in the
     * after graph as a _Fused op, else the first remapper rewrite there at all */
    var target = opts.selftest;
    function remapIn(fused) {
      return function (e) {
        if (e.kind !== 'rewrote' || !/^remap\./.test(e.pattern) || !A || !A.index.has(e.node)) return false;
        if (fused && !/^_Fused/.test(A.op[A.index.get(e.node)])) return false;
        target = e.node; return true;
      };
    }
    if (!target && !events.some(remapIn(true))) events.some(remapIn(false));
    if (target) {
      var tp = PA && PA.g.index.has(target) ? PA : PB;
      r.clicked = target;
      r.clicked_op = tp.g.op[tp.g.index.get(target)];
      r.click_hit = clickNode(tp, tp.g.index.get(target));
      var info = $('info').textContent;
      r.panel = info.slice(0, 3000);
      r.panel_patterns = (tp.g.ev[tp.g.index.get(target)] || []).map(function (k) { return events[k].pattern; })
        .filter(function (p) { return info.indexOf(p) >= 0; });
    }
    $('gn-selftest').textContent = JSON.stringify(r);
    $('gn-selftest').hidden = false;
  }
})();
