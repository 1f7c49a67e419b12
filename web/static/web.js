// xqf-web: charts (Chart.js, served by xqf-web itself) and live updates
// (Server-Sent Events) over the server-rendered pages, which work without it.
// Text from the server is set with textContent, never as HTML.
(function () {
  'use strict';
  var charts = {};
  var data = null;
  var el = document.getElementById('xqf-data');
  if (el) { try { data = JSON.parse(el.textContent); } catch (e) { data = null; } }

  function line(id, label, points, extra) {
    var canvas = document.getElementById(id);
    if (!canvas || !window.Chart) { return null; }
    var sets = [{ label: label, data: points, borderColor: '#7a1f1f', backgroundColor: '#7a1f1f',
                  borderWidth: 1.5, pointRadius: 0, tension: 0 }];
    (extra || []).forEach(function (e) {
      sets.push({ label: e.label, data: e.data, borderColor: e.color, borderDash: [5, 4], borderWidth: 1,
                  pointRadius: 0 });
    });
    return new window.Chart(canvas, {
      type: 'line', data: { datasets: sets },
      options: { animation: false, parsing: false, maintainAspectRatio: false, normalized: true,
                 scales: { x: { type: 'linear', title: { display: true, text: 'games' } } },
                 plugins: { legend: { display: sets.length > 1, labels: { boxWidth: 12 } } } }
    });
  }
  function flat(y, x0, x1) { return [{ x: x0, y: y }, { x: x1, y: y }]; }
  function lastX(points) { return points.length ? points[points.length - 1].x : 0; }
  function widen(chart, x) {
    chart.data.datasets.forEach(function (d, i) {
      if (i > 0 && d.data.length === 2) { d.data[1].x = Math.max(d.data[1].x, x); }
    });
  }

  if (data) {
    var llr = [], elo = [];
    data.points.forEach(function (p) {
      if (p[1] !== null) { llr.push({ x: p[0], y: p[1] }); }
      if (p[2] !== null) { elo.push({ x: p[0], y: p[2] }); }
    });
    var end = Math.max(lastX(llr), 1);
    if (data.lower !== null) {
      charts.llr = line('llr', 'LLR', llr, [
        { label: 'upper bound', data: flat(data.upper, 0, end), color: '#2f7d32' },
        { label: 'lower bound', data: flat(data.lower, 0, end), color: '#b00020' }]);
    }
    charts.elo = line('elo', 'Elo', elo, [{ label: '0', data: flat(0, 0, Math.max(lastX(elo), 1)), color: '#888' }]);
    (data.theta || []).forEach(function (t, i) {
      var pts = t.points.map(function (p) { return { x: p[0], y: p[1] }; });
      var x1 = Math.max(lastX(pts), 1);
      // the axis zooms on the trajectory (the bounds are in the label, as the report does)
      var c = line('theta-' + i, t.name + ' [' + t.min + ', ' + t.max + ']', pts, [
        { label: 'start', data: flat(t.start, 0, x1), color: '#888' }]);
      if (c) { charts['theta-' + i] = c; }
    });
  }

  function push(chart, x, y) {
    if (!chart || y === null || y === undefined) { return; }
    var d = chart.data.datasets[0].data;
    if (d.length && d[d.length - 1].x >= x) { d[d.length - 1].y = y; } else { d.push({ x: x, y: y }); }
    widen(chart, x);
    chart.update('none');
  }

  function setText(root, key, value) {
    var nodes = root.querySelectorAll('[data-k="' + key + '"]');
    for (var i = 0; i < nodes.length; i++) {
      if (key === 'bar') { nodes[i].style.width = (100 * value).toFixed(1) + '%'; } else { nodes[i].textContent = value; }
    }
  }
  var KEYS = ['state', 'verdict', 'games', 'wdl', 'penta', 'elo', 'nelo', 'los', 'llr', 'iter', 'rate', 'eta', 'bar',
              'build-test', 'build-base'];

  var live = document.getElementById('live');
  if (live && window.EventSource) {
    var source = new EventSource(live.getAttribute('data-events'));
    source.onopen = function () { live.className = 'live-on'; };
    source.onerror = function () { live.className = ''; };
    source.addEventListener('run', function (ev) {
      var m; try { m = JSON.parse(ev.data); } catch (e) { return; }
      var root = data ? document : document.querySelector('tr[data-run="' + m.id + '"]');
      if (!root) { return; }
      KEYS.forEach(function (k) { if (m[k] !== undefined) { setText(root, k, m[k]); } });
      if (data && m.id === data.run && data.state === 'building' && m.state !== 'building') {
        window.location.reload();      /* built (or failed): the page shows the builds and what follows */
        return;
      }
      if (data && m.id === data.run) {
        push(charts.llr, m.point[0], m.point[1]);
        push(charts.elo, m.point[0], m.point[2]);
        (m.theta || []).forEach(function (v, i) {
          push(charts['theta-' + i], m.theta_games, v);
          var cell = document.querySelector('[data-theta="' + i + '"]');
          if (cell) { cell.textContent = v.toFixed(2); }
        });
      }
      document.body.setAttribute('data-updates', String(Number(document.body.getAttribute('data-updates') || 0) + 1));
    });
    source.addEventListener('runs', function () { if (!data) { window.location.reload(); } });
  }

  // Sortable lists: a click on a header sorts the rows by that column, a
  // second click the other way; a numeric column (class num) by value.
  var heads = document.querySelectorAll('table.sortable th');
  for (var h = 0; h < heads.length; h++) {
    heads[h].addEventListener('click', function (ev) {
      var th = ev.currentTarget, table = th.closest('table'), body = table.tBodies[0];
      var col = Array.prototype.indexOf.call(th.parentNode.children, th);
      var numeric = th.classList.contains('num');
      var down = th.getAttribute('data-order') !== 'down';
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col] ? a.cells[col].textContent : '', y = b.cells[col] ? b.cells[col].textContent : '';
        var c = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
        return down ? -c : c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
      th.parentNode.querySelectorAll('th').forEach(function (o) { o.removeAttribute('data-order'); });
      th.setAttribute('data-order', down ? 'down' : 'up');
    });
  }

  var copies = document.querySelectorAll('button[data-copy]');
  for (var i = 0; i < copies.length; i++) {
    copies[i].addEventListener('click', function (ev) {
      var area = document.getElementById(ev.target.getAttribute('data-copy'));
      if (!area) { return; }
      area.select();
      if (navigator.clipboard) { navigator.clipboard.writeText(area.value); } else { document.execCommand('copy'); }
      ev.target.textContent = 'Copied';
    });
  }
})();
