/* heapledger report — the page's script (analyzer/assets/report.js, inlined into each
   report; it loads nothing). Three jobs:
   1. flame graphs drawn from the JSON in #hl-flame-data: a metric switch (bytes, count,
      leaked, temporaries, cycles), click to zoom into a frame (click an ancestor or "reset
      zoom" to go back), search by function name (matches drawn in magenta, their share
      shown below the graph);
   2. tables of class "sortable" sort on a header click (again: the other direction); cells
      with data-v sort by that number;
   3. the hidden #hl-status element gets data-charts / data-with-data and a per-chart count
      of data marks (read by tests/analyzer/html_test.sh; not shown). */
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var ROW = 18;

  function human(v) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(v) >= 1024 && i < 4) { v /= 1024; i++; }
    return i ? v.toFixed(1) + ' ' + u[i] : Math.round(v) + ' ' + u[i];
  }
  function num(v) { return String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function fmt(metric, v) {
    if (metric === 'bytes' || metric === 'leaked') return human(v);
    if (metric === 'cycles') return num(v) + ' cycles';
    if (metric === 'count') return num(v) + ' allocations';
    return num(v) + ' temporaries';
  }
  function el(name, attrs) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; }
    return h;
  }
  function color(name) {
    var h = hash(name);
    return 'hsl(' + (10 + h % 45) + ',' + (60 + (h >>> 8) % 30) + '%,' + (55 + (h >>> 16) % 15) + '%)';
  }

  /* The call tree of one metric: nodes keyed by function name under their parent. */
  function buildTree(data, mi) {
    var root = { name: 'all', w: 0, kids: [], map: new Map(), locs: new Map(), mod: '', parent: null };
    data.stacks.forEach(function (s) {
      var w = s[mi + 1];
      if (!w) return;
      root.w += w;
      var n = root;
      s[0].forEach(function (fi) {
        var fr = data.frames[fi], c = n.map.get(fr[0]);
        if (!c) {
          c = { name: fr[0], w: 0, kids: [], map: new Map(), locs: new Map(), mod: fr[2], parent: n };
          n.map.set(fr[0], c);
          n.kids.push(c);
        }
        c.w += w;
        if (fr[1]) c.locs.set(fr[1], (c.locs.get(fr[1]) || 0) + w);
        n = c;
      });
    });
    (function sort(n) { n.kids.sort(function (a, b) { return b.w - a.w || (a.name < b.name ? -1 : 1); }); n.kids.forEach(sort); })(root);
    return root;
  }
  function depthOf(n) { var d = 0; for (var k = 0; k < n.kids.length; k++) d = Math.max(d, 1 + depthOf(n.kids[k])); return d; }
  function pathOf(n) { var p = []; for (; n.parent; n = n.parent) p.unshift(n.name); return p; }
  function locsText(n) {
    var l = Array.from(n.locs.entries()).sort(function (a, b) { return b[1] - a[1]; });
    var s = l.slice(0, 3).map(function (e) { return e[0]; }).join(', ');
    return l.length > 3 ? s + ' and ' + (l.length - 3) + ' more lines' : s;
  }

  function Flame(box, data) {
    this.box = box;
    this.data = data;
    this.svg = box.querySelector('svg.flame');
    this.info = box.querySelector('.finfo');
    this.search = box.querySelector('.fsearch');
    this.metric = box.getAttribute('data-metric') || 'bytes';
    this.zoomPath = [];
    this.query = '';
    this.trees = {};
    var self = this;
    box.querySelectorAll('.metrics button').forEach(function (b) {
      b.addEventListener('click', function () { self.setMetric(b.getAttribute('data-m')); });
    });
    box.querySelector('.freset').addEventListener('click', function () { self.zoomPath = []; self.draw(); });
    this.search.addEventListener('input', function () { self.query = self.search.value.trim().toLowerCase(); self.draw(); });
    this.draw();
  }
  Flame.prototype.tree = function () {
    var mi = this.data.metrics.indexOf(this.metric);
    if (!this.trees[this.metric]) this.trees[this.metric] = buildTree(this.data, mi);
    return this.trees[this.metric];
  };
  Flame.prototype.setMetric = function (m) {
    if (this.data.metrics.indexOf(m) < 0) return;
    this.metric = m;
    this.draw(); /* the zoom stays on the same frames when the new metric has them */
  };
  Flame.prototype.draw = function () {
    var self = this, svg = this.svg, root = this.tree(), metric = this.metric, q = this.query;
    this.box.setAttribute('data-metric', metric);
    this.box.querySelectorAll('.metrics button').forEach(function (b) {
      b.setAttribute('aria-pressed', String(b.getAttribute('data-m') === metric));
    });
    /* The zoomed node: follow the path as far as this metric's tree has it. */
    var z = root;
    for (var i = 0; i < this.zoomPath.length; i++) {
      var c = z.map.get(this.zoomPath[i]);
      if (!c) break;
      z = c;
    }
    this.zoomPath = pathOf(z);
    svg.setAttribute('data-zoom', z.name);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var W = Math.max(280, Math.floor(svg.parentNode.clientWidth || 760));
    var anc = [];
    for (var a = z; a; a = a.parent) anc.unshift(a);
    var rows = anc.length + depthOf(z);
    var H = Math.max(1, rows) * ROW + 4;
    svg.setAttribute('width', W);
    svg.setAttribute('height', root.w ? H : 24);
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + (root.w ? H : 24));
    var matched = 0, marks = 0;
    if (!root.w) {
      svg.appendChild(el('text', { x: 4, y: 16, 'class': 'none' })).textContent =
        'nothing to show for ' + metric;
      svg.setAttribute('data-marks', 0);
      svg.setAttribute('data-matches', 0);
      this.info.textContent = 'No ' + metric + ' recorded in this run.';
      return;
    }
    function box(n, x, w, d, inZoom, counted) {
      if (w < 0.5) return;
      var m = q && n.parent && n.name.toLowerCase().indexOf(q) >= 0;
      if (m && !counted && inZoom) matched += n.w;
      var g = el('g', { 'class': 'hl-datum' + (m ? ' match' : '') + (!inZoom ? ' dim' : ''), 'data-name': n.name });
      g.appendChild(el('rect', { x: x.toFixed(2), y: d * ROW, width: w.toFixed(2), height: ROW - 1, fill: color(n.name) }));
      var t = el('title', {});
      var pct = (100 * n.w / root.w).toFixed(1);
      var loc = locsText(n);
      t.textContent = n.name + ' — ' + fmt(metric, n.w) + ' (' + pct + '%)' + (loc ? ' — ' + loc : '') + (n.mod ? ' [' + n.mod + ']' : '');
      g.appendChild(t);
      if (w > 36) {
        var maxc = Math.floor((w - 6) / 6.6), label = n.name;
        if (label.length > maxc) label = maxc >= 3 ? label.slice(0, maxc - 2) + '..' : '';
        if (label) {
          var tx = el('text', { x: (x + 3).toFixed(2), y: d * ROW + 13 });
          tx.textContent = label;
          g.appendChild(tx);
        }
      }
      g.addEventListener('click', function (ev) { ev.stopPropagation(); self.zoomPath = pathOf(n); self.draw(); });
      g.addEventListener('mouseenter', function () { self.info.textContent = t.textContent; });
      svg.appendChild(g);
      marks++;
      return m;
    }
    /* Ancestors of the zoomed node span the width, greyed; then its subtree at full width. */
    for (var k = 0; k < anc.length - 1; k++) box(anc[k], 0, W, k, false, false);
    (function walk(n, x, w, d, counted) {
      var m = box(n, x, w, d, true, counted);
      if (w < 0.5) return;
      var cx = x;
      for (var j = 0; j < n.kids.length; j++) {
        var cw = w * n.kids[j].w / n.w;
        walk(n.kids[j], cx, cw, d + 1, counted || m);
        cx += cw;
      }
    })(z, 0, W, anc.length - 1, false);
    svg.setAttribute('data-marks', marks);
    svg.setAttribute('data-matches', svg.querySelectorAll('g.match').length);
    var head = (z === root ? 'all' : z.name) + ': ' + fmt(metric, z.w) +
      (z === root ? '' : ' (' + (100 * z.w / root.w).toFixed(1) + '% of all)');
    if (this.data.shown < this.data.sites)
      head += '; ' + this.data.shown + ' of ' + this.data.sites + ' sites drawn';
    if (q) head += ' — "' + q + '" matches ' + fmt(metric, matched) + ' (' + (100 * matched / z.w).toFixed(1) + '% of the view)';
    this.info.textContent = head;
  };

  var flames = [];
  var dataEl = document.getElementById('hl-flame-data');
  if (dataEl) {
    var data = null;
    try { data = JSON.parse(dataEl.textContent); } catch (e) { data = null; }
    if (data) document.querySelectorAll('.flamebox').forEach(function (b) { flames.push(new Flame(b, data)); });
  }
  var pending = 0;
  window.addEventListener('resize', function () {
    if (pending) return;
    pending = requestAnimationFrame(function () { pending = 0; flames.forEach(function (f) { f.draw(); }); });
  });
  window.hlFlames = flames;
  /* A headline card that names a metric opens the first flame graph on it. */
  document.querySelectorAll('a.card').forEach(function (a) {
    var m = a.querySelector('[data-flame-metric]');
    if (m && flames.length)
      a.addEventListener('click', function () { flames[0].setMetric(m.getAttribute('data-flame-metric')); });
  });

  /* Sortable tables. */
  document.querySelectorAll('table.sortable').forEach(function (t) {
    var head = t.tHead && t.tHead.rows[0];
    if (!head) return;
    Array.prototype.forEach.call(head.cells, function (th, col) {
      th.setAttribute('tabindex', '0');
      function sort() {
        var desc = th.getAttribute('aria-sort') !== 'descending';
        Array.prototype.forEach.call(head.cells, function (o) { o.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
        var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        function key(r) {
          var c = r.cells[col];
          if (!c) return '';
          var v = c.getAttribute('data-v');
          return v !== null ? parseFloat(v) : c.textContent.toLowerCase();
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b), o = x < y ? -1 : x > y ? 1 : 0;
          return desc ? -o : o;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener('click', sort);
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
    });
  });

  /* The status the tests read (hidden). */
  var charts = document.querySelectorAll('svg.hl-chart'), withData = 0, parts = [];
  for (var i = 0; i < charts.length; i++) {
    var n = charts[i].querySelectorAll('.hl-datum').length;
    if (n > 0) withData++;
    parts.push(charts[i].getAttribute('data-chart') + '=' + n);
  }
  var st = document.getElementById('hl-status');
  if (st) {
    st.textContent = 'charts=' + charts.length + ' with-data=' + withData + ' ' + parts.join(' ');
    st.setAttribute('data-charts', charts.length);
    st.setAttribute('data-with-data', withData);
  }
})();
