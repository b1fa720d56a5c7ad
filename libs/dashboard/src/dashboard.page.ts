import { readFileSync } from 'node:fs';
import { HISTORY_SCRIPT, HISTORY_STYLE } from './dashboard-history.page';
import { SEARCH_SCRIPT } from './dashboard-search.page';

/**
 * morphdom (MIT), inlined: each poll builds the sections anew and morphdom changes only what
 * differs in the live page, so a node whose text did not change stays the same node and a
 * selection in it (a message id being copied) survives the poll. `</` is escaped so the library
 * cannot end its script element.
 */
const MORPHDOM = readFileSync(require.resolve('morphdom/dist/morphdom-umd.min.js'), 'utf8').replace(
  /<\//g,
  '<\\/',
);

/**
 * The dashboard page: one HTML document, its CSS and script inline, no build step and nothing
 * fetched from elsewhere. The script polls `api/state` beside the page's own URL (so it works
 * under any path or global prefix) and builds the DOM with textContent only: messages, errors
 * and ids are shown, never interpreted as HTML.
 */
export function renderDashboardPage(title: string): string {
  return PAGE.split('__TITLE__')
    .join(escapeHtml(title))
    .replace('__MORPHDOM__', () => MORPHDOM)
    .replace('__HISTORY_STYLE__', () => HISTORY_STYLE)
    .replace('__HISTORY_SCRIPT__', () => HISTORY_SCRIPT)
    .replace('__SEARCH_SCRIPT__', () => SEARCH_SCRIPT);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
  :root { --fg: #1d2430; --muted: #667085; --line: #e4e7ec; --bg: #f6f7f9; --ok: #157f3b; --warn: #b54708; --bad: #b42318; --accent: #2952cc; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
  header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; padding: 14px 24px; background: #fff; border-bottom: 1px solid var(--line); }
  header h1 { margin: 0; font-size: 18px; }
  header .meta { color: var(--muted); font-size: 12px; }
  main { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 16px; padding: 16px 24px; }
  #inbox, [data-inbox], #failover { grid-column: 1 / -1; }
  section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; min-width: 0; }
  section h2 { margin: 0 0 10px; font-size: 15px; display: flex; gap: 8px; align-items: center; }
  table { width: 100%; border-collapse: collapse; font-size: 13px; }
  th, td { text-align: left; padding: 5px 6px; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { color: var(--muted); font-weight: 500; }
  td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
  code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; word-break: break-all; }
  .badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; background: var(--line); }
  .badge.ok { background: #dcfae6; color: var(--ok); } .badge.warn { background: #fef0c7; color: var(--warn); }
  .badge.bad { background: #fee4e2; color: var(--bad); } .badge.info { background: #e0eaff; color: var(--accent); }
  .tiles { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 10px; }
  .tile { flex: 1 1 70px; border: 1px solid var(--line); border-radius: 6px; padding: 6px 8px; }
  .tile .n { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
  .tile .l { color: var(--muted); font-size: 12px; }
  .tile.parked .n { color: var(--bad); } .tile.paused .n { color: var(--warn); }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 14px; margin: 0; }
  dt { color: var(--muted); } dd { margin: 0; }
  .error { color: var(--bad); white-space: pre-wrap; }
  .muted { color: var(--muted); }
  button { font: inherit; font-size: 12px; padding: 2px 8px; margin: 0 2px 2px 0; border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; }
  button:hover { border-color: var(--accent); color: var(--accent); }
  button.danger:hover { border-color: var(--bad); color: var(--bad); }
  #banner { display: none; padding: 8px 24px; background: #fee4e2; color: var(--bad); }
  #notice { min-height: 18px; padding: 0 24px; color: var(--muted); font-size: 12px; }
  h3 { font-size: 13px; margin: 12px 0 4px; }
__HISTORY_STYLE__</style>
</head>
<body>
<header>
  <h1>__TITLE__</h1>
  <span class="meta" id="instance"></span>
  <span class="meta" id="mode"></span>
  <span class="meta" id="refreshed"></span>
</header>
<div id="banner" role="alert"></div>
<div id="notice" aria-live="polite"></div>
<pre id="payload" data-testid="payload" style="display:none; white-space: pre-wrap; background: #fff; border: 1px solid var(--line); padding: 8px; max-height: 300px; overflow: auto;"></pre>
<main id="sections"><p class="muted">Loading…</p></main>
<script>__MORPHDOM__</script>
<script>
(function () {
  'use strict';
  var base = location.pathname.replace(/\\/+$/, '');
  var pollMs = 3000;
  // A GET of the page's API, as JSON; a refusal rejects with 'HTTP <status>' ('<what> answered HTTP <status>').
  // An answer that does not come within the bound (three polls, at least 10 s) is given up with an
  // error, so a request the server or the network left hanging cannot stop the page's polls.
  function getJson(path, what) {
    var abort = new AbortController();
    var waitMs = Math.max(10000, 3 * pollMs);
    var bound = setTimeout(function () { abort.abort(); }, waitMs);
    return fetch(base + path, { cache: 'no-store', headers: { accept: 'application/json' }, signal: abort.signal })
      .then(function (res) { if (!res.ok) throw new Error((what ? what + ' answered ' : '') + 'HTTP ' + res.status); return res.json(); })
      .catch(function (e) { throw abort.signal.aborted ? new Error((what ? what + ': ' : '') + 'no answer within ' + waitMs / 1000 + ' s') : e; })
      .finally(function () { clearTimeout(bound); });
  }
__HISTORY_SCRIPT__
__SEARCH_SCRIPT__
  var timer = null;
  var lastState = null;

  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (attrs[k] === undefined || attrs[k] === null) continue;
      if (k === 'text') el.textContent = attrs[k];
      // A property, not a listener: a morph copies it onto the node it keeps (see morph).
      else if (k === 'onclick') el.onclick = attrs[k];
      else el.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) c.forEach(function (x) { if (x) el.appendChild(typeof x === 'string' ? document.createTextNode(x) : x); });
      else el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return el;
  }
  // Keyed nodes (an id, or data-key) are matched across polls by key, the rest by position.
  function nodeKey(node) {
    return node.id || (node.getAttribute && node.getAttribute('data-key')) || undefined;
  }
  // Makes the live element \`from\` look like \`to\`, touching only what differs. A subtree marked
  // data-keep (the search panels) is left as it is: it has state of its own (what was typed).
  function morph(from, to) {
    morphdom(from, to, {
      getNodeKey: nodeKey,
      onBeforeElUpdated: function (fromEl, toEl) {
        if (fromEl.hasAttribute('data-keep') && fromEl.hasChildNodes()) return false;
        if (fromEl.onclick !== toEl.onclick) fromEl.onclick = toEl.onclick;
        return true;
      },
    });
  }
  // Replaces \`el\`'s children with \`children\` by a morph of a copy of \`el\` holding them.
  function morphChildren(el, children) {
    var next = el.cloneNode(false);
    children.forEach(function (c) { if (c) next.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    morph(el, next);
  }
  function duration(ms) {
    if (ms === null || ms === undefined) return '–';
    var neg = ms < 0, s = Math.abs(ms) / 1000, out;
    if (s < 60) out = s.toFixed(1) + ' s';
    else if (s < 3600) out = Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s';
    else out = Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
    return (neg ? '−' : '') + out;
  }
  function ago(iso) {
    if (!iso) return '–';
    return duration(Date.now() - new Date(iso).getTime()) + ' ago';
  }
  function table(headers, rows, testid) {
    return h('table', { 'data-testid': testid },
      h('thead', null, h('tr', null, headers.map(function (t) { return h('th', { text: t }); }))),
      h('tbody', null, rows));
  }
  function section(id, title, badge) {
    var el = h('section', { id: id, 'data-testid': id }, h('h2', null, title, badge));
    for (var i = 3; i < arguments.length; i++) if (arguments[i]) el.appendChild(arguments[i]);
    return el;
  }
  function failed(id, title, s) {
    return s && s.error !== undefined ? section(id, title, h('span', { 'class': 'badge bad', text: 'error' }), h('p', { 'class': 'error', text: s.error })) : null;
  }

  // A lease that is still running means its renewals are on time: say so, the remaining lease muted.
  function expiry(m) {
    if (m.state === 'owned') return h('td', { 'data-testid': 'expiry' }, h('span', { text: 'renewed on time' }), ' ', h('span', { 'class': 'muted', text: '(lease ' + duration(m.expiresInMs) + ')' }));
    if (m.state === 'transition') return h('td', { 'data-testid': 'expiry', 'class': 'warn', text: 'owner lost, free in ' + duration(m.expiresInMs) });
    return h('td', { 'data-testid': 'expiry', 'class': 'muted', text: '–' });
  }

  function simba(s) {
    var rows = s.mutexes.map(function (m) {
      return h('tr', { 'data-mutex': m.mutex },
        h('td', null, h('code', { text: m.mutex })),
        h('td', { 'data-testid': 'owner' }, m.owner ? h('code', { text: m.owner }) : h('span', { 'class': 'muted', text: 'none' }),
          m.ownedHere ? h('span', null, ' ', h('span', { 'class': 'badge ok', 'data-testid': 'owned-here', text: 'this instance' })) : null),
        h('td', null, h('span', { 'class': 'badge ' + (m.state === 'owned' ? 'ok' : m.state === 'transition' ? 'warn' : ''), text: m.state })),
        h('td', { 'class': 'num mono', 'data-testid': 'fencing-token', text: m.fencingToken === null ? '–' : String(m.fencingToken) }),
        expiry(m));
    });
    return section('simba', 'Simba mutexes', null, rows.length
      ? table(['mutex', 'owner', 'state', 'fencing token', 'lease'], rows, 'simba-mutexes')
      : h('p', { 'class': 'muted', text: 'No mutex in the table yet.' }));
  }

  function locker(s) {
    var master = s.role === 'master';
    return section('locker', 'Locker', h('span', { 'class': 'badge ' + (master ? 'ok' : 'info'), 'data-testid': 'locker-role', text: master ? 'master' : 'standby' }),
      h('dl', null,
        h('dt', { text: 'lock' }), h('dd', null, h('code', { text: s.lockName })),
        h('dt', { text: 'this instance' }), h('dd', null, h('code', { text: s.instanceId }), ' ', h('span', { 'class': 'muted', text: '(' + s.state + ')' })),
        h('dt', { text: 'holder' }), h('dd', { 'data-testid': 'locker-holder' }, s.holder ? h('code', { text: s.holder }) : h('span', { 'class': 'muted', text: 'nobody' })),
        h('dt', { text: 'last keep-alive' }), h('dd', { text: master ? ago(s.lastKeepAlive) : '–' }),
        s.lastError ? h('dt', { text: 'last error' }) : null, s.lastError ? h('dd', { 'class': 'error', text: s.lastError }) : null),
      s.locks && s.locks.length ? h('div', null, h('h3', { text: 'Locks in the table' }), table(['lock', 'master', 'lease'], s.locks.map(function (l) {
        return h('tr', { 'data-lock': l.lock }, h('td', null, h('code', { text: l.lock })),
          h('td', null, l.master ? h('code', { text: l.master }) : h('span', { 'class': 'muted', text: 'none' }),
            l.masterHere ? h('span', null, ' ', h('span', { 'class': 'badge ok', 'data-testid': 'lock-here', text: 'this instance' })) : null),
          h('td', { 'class': 'num', text: l.timeFromNowMs === null ? '–' : l.timeFromNowMs > 0 ? 'ends in ' + duration(l.timeFromNowMs) : 'kept alive ' + duration(-l.timeFromNowMs) + ' ago' }));
      }), 'locks')) : null);
  }

  function actionButtons(state, id, actions, name) {
    if (!state.actions) return null;
    return h('td', { 'class': 'actions' }, h('button', { type: 'button', 'data-action': 'payload', text: 'payload', onclick: function () { showPayload(id, name); } }),
      actions.map(function (a) {
        return h('button', { type: 'button', 'data-action': a, 'class': a === 'delete' ? 'danger' : null, text: a, onclick: function () { act(a, id, name); } });
      }));
  }
  // The payload under the page's notice line (textContent only: a payload is never HTML to us).
  function showPayload(id, name) {
    var q = name ? '?inbox=' + encodeURIComponent(name) : '';
    var out = document.getElementById('payload');
    getJson('/api/inbox/payload/' + encodeURIComponent(id) + q)
      .then(function (p) { out.textContent = 'payload of ' + id + ' (' + p.encoding + '):\\n' + (typeof p.payload === 'string' ? p.payload : JSON.stringify(p.payload, null, 2)); out.style.display = 'block'; })
      .catch(function (e) { out.textContent = 'payload of ' + id + ': ' + e.message; out.style.display = 'block'; });
  }
  function messages(state, list, testid, actions, empty, name) {
    if (!list.length) return h('p', { 'class': 'muted', 'data-testid': testid, text: empty });
    var headers = ['id', 'type', 'retries', 'inserted', 'error'];
    if (state.actions) headers.push('');
    return table(headers, list.map(function (m) {
      // Keyed per inbox and list: a row stays the same node while its message is listed there.
      return h('tr', { 'data-message-id': m.id, 'data-key': inboxId(name) + '/' + testid + '/' + m.id },
        h('td', null, h('code', { text: m.id })), h('td', { text: m.type }),
        h('td', { 'class': 'num', text: String(m.retries) }), h('td', { text: ago(m.inserted) }),
        h('td', { 'class': 'error', title: m.error || null, text: (m.error || '').split('\\n')[0] }),
        actionButtons(state, m.id, actions, name));
    }), testid);
  }
  // name: undefined for the default inbox, else the name of a named inbox (its own section).
  function inbox(state, s, name) {
    var order = ['due', 'retrying', 'paused', 'parked', 'expired', 'total'];
    var tiles = h('div', { 'class': 'tiles' }, order.filter(function (k) { return k in s.counts; }).map(function (k) {
      return h('div', { 'class': 'tile ' + k, 'data-count': k }, h('div', { 'class': 'n', text: String(s.counts[k]) }), h('div', { 'class': 'l', text: k }));
    }));
    var oldest = s.oldestDue
      ? h('p', { 'data-testid': 'oldest-due' }, 'Oldest due: ', h('code', { text: s.oldestDue.id }), ' (' + s.oldestDue.type + '), waiting ' + duration(s.oldestDue.ageMs) + ' ',
          state.actions ? h('button', { type: 'button', 'data-action': 'pause', text: 'pause', onclick: function () { act('pause', s.oldestDue.id, name); } }) : null)
      : h('p', { 'class': 'muted', 'data-testid': 'oldest-due', text: 'Nothing due.' });
    var finder = panelSlot(name);
    var bulkButtons = state.actions && s.parked.length ? h('p', null,
      h('button', { type: 'button', 'data-bulk': 'retry', text: 'retry all listed', onclick: function () { bulk('retry', s.parked, name); } }), ' ',
      h('button', { type: 'button', 'data-bulk': 'delete', 'class': 'danger', text: 'delete all listed', onclick: function () { bulk('delete', s.parked, name); } })) : null;
    var el = section(inboxId(name), inboxTitle(name), pausedTypesBadge(s), h('div', null, tiles, inboxCharts(name), oldest, pausedTypes(state, s, name), finder,
      h('h3', { text: 'Parked' + (s.counts.parked > s.parked.length ? ' (first ' + s.parked.length + ' of ' + s.counts.parked + ')' : '') }), bulkButtons,
      messages(state, s.parked, 'parked', ['retry', 'pause', 'delete'], 'No parked message.', name),
      h('h3', { text: 'Paused' }), messages(state, s.paused, 'paused', ['resume', 'delete'], 'No paused message.', name)));
    if (name) el.setAttribute('data-inbox', name);
    return el;
  }
  function inboxId(name) { return name ? 'inbox-' + name : 'inbox'; }
  // Types paused across the cluster: no node claims their messages until they are resumed.
  function pausedTypesBadge(s) {
    var n = (s.pausedTypes || []).length;
    return n ? h('span', { 'class': 'badge warn', 'data-testid': 'paused-types-badge', text: n + ' type' + (n === 1 ? '' : 's') + ' paused' }) : null;
  }
  function pausedTypes(state, s, name) {
    var list = s.pausedTypes || [];
    if (!list.length) return h('p', { 'class': 'muted', 'data-testid': 'paused-types', text: 'No message type is paused.' });
    var headers = ['paused type', 'paused by', 'since', 'reason'];
    if (state.actions) headers.push('');
    return h('div', { 'data-testid': 'paused-types' }, h('h3', { text: 'Paused types' }), table(headers, list.map(function (p) {
      return h('tr', { 'data-paused-type': p.type, 'data-key': inboxId(name) + '/paused-type/' + p.type },
        h('td', null, h('code', { text: p.type })), h('td', { text: p.pausedBy }), h('td', { text: ago(p.pausedAt) }),
        h('td', { text: p.reason || '' }),
        state.actions ? h('td', { 'class': 'actions' }, h('button', { type: 'button', 'data-type-action': 'resume', text: 'resume type', onclick: function () { actOnType('resume', p.type, undefined, name); } })) : null);
    }), 'paused-types-table'));
  }
  function actOnType(action, type, reason, name) {
    if (action === 'pause' && !confirm('Pause message type ' + type + ' on every node?')) return;
    var body = { type: type };
    if (reason) body.reason = reason;
    if (name) body.inbox = name;
    post('/api/inbox/types/' + action, body, action + ' type ' + type);
  }

  function inboxTitle(name) { return name ? 'Inbox · ' + name : 'Inbox'; }

  function failover(s) {
    var rows = s.failovers.map(function (f) {
      return h('tr', { 'data-failover': f.name },
        h('td', null, h('code', { text: f.name }), h('div', { 'class': 'muted', text: f.declaredOn })),
        h('td', { 'class': 'num', 'data-testid': 'live-entries', text: f.liveEntries === null ? '–' : String(f.liveEntries) }),
        h('td', { 'class': 'num', 'data-testid': 'stale-served', text: String(f.staleServed) }),
        h('td', { 'class': 'num', text: String(f.calls.success || 0) + ' ok / ' + String(f.calls.failed || 0) + ' failed' }),
        h('td', { 'data-testid': 'last-error' }, f.lastError ? h('span', null, h('span', { 'class': 'error', text: f.lastError.message }), h('div', { 'class': 'muted', text: ago(f.lastError.at) })) : h('span', { 'class': 'muted', text: 'none' })));
    });
    return section('failover', 'Failover', h('span', { 'class': 'muted', text: s.store + (s.storeErrors ? ', ' + s.storeErrors + ' store errors' : '') + (s.pendingWrites ? ', ' + s.pendingWrites + ' writes pending' : '') }),
      rows.length ? table(['failover', 'live entries (all instances)', 'stale served (this instance)', 'calls (this instance)', 'last upstream error (this instance)'], rows, 'failovers') : h('p', { 'class': 'muted', text: 'No @Failover method.' }));
  }

  function health(state) {
    var names = Object.keys(state.health || {});
    if (!names.length) return null;
    return section('health', 'Health', null, h('div', { 'class': 'tiles' }, names.map(function (name) {
      var hlt = state.health[name];
      var up = hlt.status === 'up';
      return h('div', { 'class': 'tile', 'data-health': name, title: up ? null : (hlt.error || hlt.reason || JSON.stringify(hlt)) },
        h('div', { 'class': 'n' }, h('span', { 'class': 'badge ' + (up ? 'ok' : 'bad'), text: hlt.status })), h('div', { 'class': 'l', text: name }));
    })));
  }

  function scheduled(s) {
    var rows = s.jobs.map(function (j) {
      return h('tr', { 'data-job': j.name },
        h('td', null, h('code', { text: j.name }), h('div', { 'class': 'muted', text: j.where || '' })),
        h('td', { 'data-testid': 'last-run' }, j.lastRunAt ? ago(j.lastRunAt) : h('span', { 'class': 'muted', text: 'not here yet' }),
          j.lastRunError ? h('div', { 'class': 'error', text: j.lastRunError }) : null),
        h('td', { 'class': 'num', text: j.runs + ' run / ' + j.skips + ' skipped' }),
        h('td', { 'data-testid': 'job-holder' }, j.holder ? h('code', { text: j.holder }) : h('span', { 'class': 'muted', text: 'none' }),
          j.holderIsThisInstance ? h('span', null, ' ', h('span', { 'class': 'badge ok', text: 'this instance' })) : null),
        h('td', { 'class': 'num', text: j.timeFromNowMs === null ? '–' : j.timeFromNowMs > 0 ? 'locked ' + duration(j.timeFromNowMs) + ' more' : 'free' }));
    });
    return section('scheduled', '@ScheduledLock jobs', null, rows.length
      ? table(['job', 'last run here', 'this instance', 'holder of the last tick', 'lock'], rows, 'scheduled-jobs')
      : h('p', { 'class': 'muted', text: 'No job has ticked on this instance yet.' }));
  }

  function bulk(action, list, name) {
    if (!list.length || !confirm(action + ' ' + list.length + ' message(s)?')) return;
    var ids = list.map(function (m) { return m.id; });
    post('/api/inbox/bulk', name ? { action: action, ids: ids, inbox: name } : { action: action, ids: ids }, action + ' ' + ids.length + ' message(s)');
  }

  function render(state) {
    lastState = state;
    document.getElementById('instance').textContent = 'this instance ' + state.instance.id + ' (pid ' + state.instance.pid + ' on ' + state.instance.hostname + ')';
    document.getElementById('mode').textContent = state.actions ? 'admin actions enabled' : 'read-only';
    document.getElementById('refreshed').textContent = 'read ' + new Date(state.readAt).toLocaleTimeString();
    var parts = [];
    if (state.simba) parts.push(failed('simba', 'Simba mutexes', state.simba) || simba(state.simba));
    if (state.locker) parts.push(failed('locker', 'Locker', state.locker) || locker(state.locker));
    if (state.inbox) parts.push(failed('inbox', 'Inbox', state.inbox) || inbox(state, state.inbox));
    Object.keys(state.namedInboxes || {}).forEach(function (name) {
      var s = state.namedInboxes[name];
      parts.push(failed(inboxId(name), inboxTitle(name), s) || inbox(state, s, name));
    });
    if (state.scheduled) parts.push(failed('scheduled', '@ScheduledLock jobs', state.scheduled) || scheduled(state.scheduled));
    if (state.failover) parts.push(failed('failover', 'Failover', state.failover) || failover(state.failover));
    var hl = health(state);
    if (hl) parts.unshift(hl);
    if (!parts.length) parts.push(h('p', { 'class': 'muted', text: 'No Holdfast module is imported by this application.' }));
    morph(document.getElementById('sections'), h('main', { id: 'sections' }, parts));
    fillPanels();
  }

  function banner(text) {
    var b = document.getElementById('banner');
    b.textContent = text || '';
    b.style.display = text ? 'block' : 'none';
  }

  // One poll loop: a read asked for while another is on its way (after an action) supersedes it,
  // and only the latest read schedules the next, so actions never add loops.
  var reads = 0;
  function refresh() {
    clearTimeout(timer);
    var read = ++reads;
    return getJson('/api/state', 'state')
      .then(function (state) {
        if (read !== reads) return;
        banner('');
        pollMs = state.pollIntervalMs || pollMs;
        render(state);
        Object.keys(panels).forEach(function (key) { panels[key].relist(); panels[key].refind(); });
      })
      .catch(function (e) { if (read === reads) banner('Cannot read the state of this instance: ' + e.message); })
      .then(function () { if (read === reads) { clearTimeout(timer); timer = setTimeout(refresh, pollMs); } });
  }

  function act(action, id, name) {
    if (action === 'delete' && !confirm('Delete message ' + id + '?')) return;
    post('/api/inbox/' + action, name ? { id: id, inbox: name } : { id: id }, action + ' ' + id);
  }

  // Every action is JSON with X-Holdfast-Request: the server refuses anything a cross-site form can send.
  function post(path, body, what) {
    var notice = document.getElementById('notice');
    fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-holdfast-request': '1' }, body: JSON.stringify(body) })
      .then(function (res) { return res.json().catch(function () { return {}; }).then(function (body) { return { res: res, body: body }; }); })
      .then(function (r) {
        notice.textContent = r.res.ok ? what + ': done' : what + ' failed: ' + (r.body.message || ('HTTP ' + r.res.status));
        return refresh();
      })
      .catch(function (e) { notice.textContent = what + ' failed: ' + e.message; });
  }

  refresh();
})();
</script>
</body>
</html>
`;
