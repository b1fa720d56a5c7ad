/**
 * The page's parts for the inbox's history and stats (issue #48), kept out of dashboard.page.ts:
 * charts of the last hour drawn as small inline SVG from `api/inbox/stats` (depth, delivered,
 * failed and parked per minute, the leader on a timeline), and a message's attempts from
 * `api/inbox/history` under the search box. Plain ES5 in the page's closure: it uses the page's
 * `h`, `base`, `morphChildren`, `lastState` and `render`.
 */
export const HISTORY_STYLE = `
  .charts { display: flex; gap: 10px; flex-wrap: wrap; margin: 4px 0 10px; }
  .chart { flex: 1 1 170px; border: 1px solid var(--line); border-radius: 6px; padding: 4px 8px; }
  .chart .l { color: var(--muted); font-size: 12px; display: flex; justify-content: space-between; }
  .chart svg { display: block; width: 100%; height: 44px; }
  .timeline { display: flex; height: 10px; margin-top: 6px; border-radius: 3px; overflow: hidden; background: #f2f4f7; }
  .timeline span { flex: 1 1 0; }
  table.attempts td { font-size: 12px; }
`;

export const HISTORY_SCRIPT = `
  // Each inbox's last hour, read at most every 30 s (the figures are per minute) and kept here:
  // the poll's render draws from this, a read that comes back renders again.
  var stats = {};
  var SVGNS = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs) {
    var el = document.createElementNS(SVGNS, tag);
    for (var k in attrs) el.setAttribute(k, attrs[k]);
    for (var i = 2; i < arguments.length; i++) if (arguments[i]) el.appendChild(arguments[i]);
    return el;
  }
  function readStats(name) {
    var key = inboxId(name), s = stats[key] || (stats[key] = { at: 0, data: null });
    if (s.reading || Date.now() - s.at < 30000) return s;
    s.reading = true;
    getJson('/api/inbox/stats' + (name ? '?inbox=' + encodeURIComponent(name) : ''))
      .then(function (data) { s.data = data; s.error = null; })
      .catch(function (e) { s.error = e.message; })
      .then(function () { s.at = Date.now(); s.reading = false; if (lastState) render(lastState); });
    return s;
  }
  // The 60 minutes ending with the current one, each with its row or null.
  function lastHour(data) {
    var end = Math.floor(new Date(data.now).getTime() / 60000) * 60000, byMinute = {};
    data.minutes.forEach(function (m) { byMinute[new Date(m.minute).getTime()] = m; });
    var out = [];
    for (var t = end - 59 * 60000; t <= end; t += 60000) out.push({ t: t, m: byMinute[t] || null });
    return out;
  }
  function chart(label, testid, points, color, bars) {
    var values = points.map(function (p) { return p.v; });
    var known = values.filter(function (v) { return v !== null; });
    var max = Math.max.apply(null, known.concat([1]));
    var w = 240, hgt = 40, step = w / values.length, y = function (v) { return hgt - (v / max) * (hgt - 2); };
    var marks = [];
    if (bars) values.forEach(function (v, i) { if (v) marks.push(svg('rect', { x: (i * step).toFixed(1), y: y(v).toFixed(1), width: Math.max(1, step - 1).toFixed(1), height: (hgt - y(v)).toFixed(1), fill: color })); });
    else {
      var line = [];
      values.forEach(function (v, i) { if (v !== null) line.push((i * step + step / 2).toFixed(1) + ',' + y(v).toFixed(1)); });
      if (line.length) marks.push(svg('polyline', { points: line.join(' '), fill: 'none', stroke: color, 'stroke-width': '1.5' }));
    }
    var last = known.length ? known[known.length - 1] : null;
    var total = known.reduce(function (a, b) { return a + b; }, 0);
    var shown = bars ? total + ' in 1 h' : last === null ? 'no sample' : 'now ' + last;
    var box = svg('svg', { viewBox: '0 0 ' + w + ' ' + hgt, preserveAspectRatio: 'none', role: 'img', 'aria-label': label + ': ' + shown });
    marks.forEach(function (m) { box.appendChild(m); });
    box.appendChild(svg('line', { x1: 0, y1: hgt - 0.5, x2: w, y2: hgt - 0.5, stroke: '#e4e7ec' }));
    return h('div', { 'class': 'chart', 'data-chart': testid, 'data-total': String(total), 'data-last': last === null ? '' : String(last) },
      h('div', { 'class': 'l' }, h('span', { text: label }), h('span', { text: shown + (bars ? '' : ', max ' + (known.length ? max : 0)) })), box);
  }
  var LEADER_COLORS = ['#2952cc', '#157f3b', '#b54708', '#7a5af8', '#c11574', '#0e9384'];
  function leaderTimeline(hour) {
    var colors = {}, n = 0, changes = [], previous = null;
    var cells = hour.map(function (p) {
      var who = p.m && p.m.leader;
      if (who && !(who in colors)) colors[who] = LEADER_COLORS[n++ % LEADER_COLORS.length];
      if (who && previous && who !== previous) changes.push(new Date(p.t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) + ' → ' + who);
      if (who) previous = who;
      return h('span', { style: 'background:' + (who ? colors[who] : 'transparent'), title: who ? new Date(p.t).toLocaleTimeString() + ' ' + who : null });
    });
    return h('div', { 'data-testid': 'leader-timeline', 'data-changes': String(changes.length) },
      h('div', { 'class': 'timeline' }, cells),
      h('div', { 'class': 'muted', text: 'leader over the hour (the node that sampled): ' + (Object.keys(colors).join(', ') || 'none in the last hour') + (changes.length ? '; changes: ' + changes.join(', ') : '') }));
  }
  // The inbox's charts of the last hour, or why there are none.
  function inboxCharts(name) {
    var s = readStats(name);
    var key = inboxId(name);
    if (s.error) return h('p', { 'class': 'muted', 'data-testid': 'charts', text: 'Charts: ' + s.error });
    if (!s.data) return h('p', { 'class': 'muted', 'data-testid': 'charts', text: 'Charts: loading…' });
    if (!s.data.minutes.length) return h('p', { 'class': 'muted', 'data-testid': 'charts', text: 'No figures in the last hour (InboxModule\\'s stats option).' });
    var hour = lastHour(s.data);
    var pick = function (f) { return hour.map(function (p) { return { v: p.m ? (p.m[f] === null || p.m[f] === undefined ? null : p.m[f]) : null }; }); };
    var counted = function (f) { return hour.map(function (p) { return { v: p.m ? p.m[f] : 0 }; }); };
    return h('div', { 'data-testid': 'charts', 'data-key': key + '/charts' },
      h('h3', { text: 'Last hour (per minute)' }),
      h('div', { 'class': 'charts' },
        chart('depth (due + retrying)', 'depth', pick('depth'), '#2952cc', false),
        chart('delivered', 'delivered', counted('delivered'), '#157f3b', true),
        chart('failed', 'failed', counted('failed'), '#b54708', true),
        chart('parked (in the table)', 'parked', pick('parkedNow'), '#b42318', false)),
      leaderTimeline(hour));
  }
  // A message's attempts under the search box (the inbox's history option).
  function attemptsOf(name, id, out) {
    if (!id) return morphChildren(out, []);
    var asked = out.asked = (out.asked || 0) + 1;
    var q = '?id=' + encodeURIComponent(id) + (name ? '&inbox=' + encodeURIComponent(name) : '');
    getJson('/api/inbox/history' + q)
      .then(function (hist) {
        if (asked !== out.asked) return;
        if (!hist.entries.length) return morphChildren(out, [h('p', { 'class': 'muted', 'data-testid': 'attempts-none', text: 'No history of ' + id + '.' })]);
        morphChildren(out, [table(['when', 'attempt', 'outcome', 'node', 'error'], hist.entries.map(function (e, i) {
          return h('tr', { 'data-key': 'attempt/' + id + '/' + i, 'data-outcome': e.outcome },
            h('td', { text: new Date(e.at).toLocaleString() }), h('td', { 'class': 'num', text: e.outcome === 'expired' ? '–' : String(e.attempt) }),
            h('td', null, h('span', { 'class': 'badge ' + (e.outcome === 'delivered' ? 'ok' : e.outcome === 'failed' ? 'warn' : 'bad'), text: e.outcome })),
            h('td', null, h('code', { text: e.node })), h('td', { 'class': 'error', text: e.error || '' }));
        }), 'attempts')]);
      })
      .catch(function (e) { if (asked === out.asked) morphChildren(out, ['history failed: ' + e.message]); });
  }
`;
