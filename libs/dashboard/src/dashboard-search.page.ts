/**
 * The page's search panel of each inbox, kept out of dashboard.page.ts: a message found by id (with
 * its attempts), the messages of a type in a status page by page with the actions of that status
 * (one by one or on everything matching), pausing a type, and the link an operator can paste.
 * Plain ES5 in the page's closure: it uses the page's `h`, `base`, `morphChildren`, `messages`,
 * `inboxId`, `post`, `actOnType`, `lastState` and the history script's `attemptsOf`.
 */
export const SEARCH_SCRIPT = `
  // The search boxes and their results outlive the polls: one panel per inbox, built once into
  // its slot (data-keep: a morph leaves it as it is). What it lists or found is read again at each
  // poll and after each action, so a row acted on leaves it and its total follows.
  var panels = {};
  var TYPE_ACTIONS = { parked: ['retry', 'pause', 'delete'], paused: ['resume', 'delete'], due: ['pause', 'delete'], retrying: ['pause', 'delete'] };
  // A section shown as failed for a poll loses its slot: the next good poll puts the same panel
  // back (what was typed, found or listed), not a new empty one.
  function panelSlot(name) {
    var key = inboxId(name);
    var kept = panels[key] && panels[key].slot;
    if (kept && !kept.isConnected) return kept;
    return h('div', { 'class': 'search', id: 'search-' + key, 'data-keep': key, 'data-inbox-name': name || '' });
  }
  function fillPanels() {
    Array.prototype.forEach.call(document.querySelectorAll('[data-keep]'), function (slot) {
      if (!slot.hasChildNodes()) buildPanel(slot, slot.getAttribute('data-inbox-name') || undefined);
    });
  }
  // A link an operator can paste: the inbox, its listing (type, status, offset) and the message
  // found, in the page's query string (?inbox=&type=&status=&offset=&id=), kept as they change.
  var linked = new URLSearchParams(location.search);
  function remember(name, panel) {
    var q = new URLSearchParams();
    if (name) q.set('inbox', name);
    if (panel.listing) { q.set('type', panel.listing.type); q.set('status', panel.listing.status); if (panel.listing.offset) q.set('offset', String(panel.listing.offset)); }
    if (panel.foundId) q.set('id', panel.foundId);
    var text = q.toString();
    history.replaceState(null, '', location.pathname + (text ? '?' + text : ''));
  }
  function buildPanel(slot, name) {
    var panel = { listing: null, foundId: null, slot: slot };
    panels[inboxId(name)] = panel;
    var idInput = h('input', { type: 'search', placeholder: 'message id', 'data-testid': 'find-id' });
    var found = h('div', { 'data-testid': 'found' });
    var typeInput = h('input', { type: 'search', placeholder: 'type: namespace:name, or a name', 'data-testid': 'find-type' });
    var status = h('select', { 'data-testid': 'find-type-status' }, Object.keys(TYPE_ACTIONS).map(function (st) { return h('option', { value: st, text: st }); }));
    var listed = h('div', { 'data-testid': 'by-type' });
    var list = function (offset) { panel.listing.offset = offset; remember(name, panel); panel.relist(); };
    panel.relist = function () { var l = panel.listing; if (l) listType(name, l.type, l.status, l.offset, listed, list); };
    var attempts = h('div', { 'data-testid': 'attempts' });
    panel.refind = function () { if (panel.foundId) { find(name, panel.foundId, found); attemptsOf(name, panel.foundId, attempts); } };
    slot.appendChild(h('p', null, idInput, ' ', h('button', { type: 'button', 'data-testid': 'find-button', text: 'find', onclick: function () { panel.foundId = idInput.value.trim() || null; remember(name, panel); panel.refind(); } }), found));
    slot.appendChild(attempts);
    slot.appendChild(h('p', null, typeInput, ' ', status, ' ', h('button', { type: 'button', 'data-testid': 'list-type', text: 'list by type', onclick: function () {
      panel.listing = typeInput.value.trim() ? { type: typeInput.value.trim(), status: status.value, offset: 0 } : null;
      remember(name, panel);
      if (panel.listing) panel.relist(); else morphChildren(listed, []);
    } })));
    slot.appendChild(listed);
    if ((lastState || {}).actions) {
      var pauseInput = h('input', { type: 'search', placeholder: 'type to pause: namespace:name', 'data-testid': 'pause-type' });
      var reasonInput = h('input', { type: 'search', placeholder: 'reason (optional)', 'data-testid': 'pause-type-reason' });
      slot.appendChild(h('p', null, pauseInput, ' ', reasonInput, ' ', h('button', { type: 'button', 'data-testid': 'pause-type-button', text: 'pause type', onclick: function () {
        var type = pauseInput.value.trim();
        if (type) actOnType('pause', type, reasonInput.value.trim(), name);
      } })));
    }
    // Opened from a pasted link: this inbox's view as it was.
    if ((linked.get('inbox') || '') === (name || '')) {
      var offset = Number(linked.get('offset'));
      if (linked.get('type') && TYPE_ACTIONS[linked.get('status') || 'parked']) {
        panel.listing = { type: linked.get('type'), status: linked.get('status') || 'parked', offset: offset > 0 && offset % 1 === 0 ? offset : 0 };
        typeInput.value = panel.listing.type;
        status.value = panel.listing.status;
        panel.relist();
      }
      if (linked.get('id')) { panel.foundId = idInput.value = linked.get('id'); panel.refind(); }
      if (panel.listing || panel.foundId) slot.scrollIntoView();
    }
  }
  // One page of the messages of a type in a status, with the actions of that status and a pager.
  function listType(name, type, status, offset, out, again) {
    var size = 20;
    // Reads overlap (a poll, an action): only the latest one asked for is shown.
    var asked = out.asked = (out.asked || 0) + 1;
    var q = '?type=' + encodeURIComponent(type) + '&status=' + status + '&offset=' + offset + '&limit=' + size + (name ? '&inbox=' + encodeURIComponent(name) : '');
    getJson('/api/inbox/messages' + q)
      .then(function (page) {
        if (asked !== out.asked) return;
        var shown = page.messages.length;
        // The last rows of the last page acted on: show the page that is last now.
        if (!shown && offset > 0 && page.total > 0) return again(Math.floor((page.total - 1) / size) * size);
        var summary = shown
          ? 'messages ' + (offset + 1) + '–' + (offset + shown) + ' of ' + page.total + ' ' + status + ' of type ' + type
          : 'No ' + status + ' message of type ' + type + (offset ? ' past the first ' + offset : '') + '.';
        morphChildren(out, [
          h('p', { 'class': 'muted', 'data-testid': 'by-type-summary', text: summary },
            offset > 0 ? h('span', null, ' ', h('button', { type: 'button', 'data-page': 'previous', text: 'previous', onclick: function () { again(Math.max(0, offset - size)); } })) : null,
            offset + shown < page.total ? h('span', null, ' ', h('button', { type: 'button', 'data-page': 'next', text: 'next', onclick: function () { again(offset + size); } }),
              ' ', h('button', { type: 'button', 'data-page': 'last', text: 'last', onclick: function () { again(Math.floor((page.total - 1) / size) * size); } })) : null),
          shown && (lastState || {}).actions ? h('p', { 'data-testid': 'by-type-all' }, TYPE_ACTIONS[status].map(function (a) {
            return h('span', null, h('button', { type: 'button', 'data-bulk-matching': a, 'class': a === 'delete' ? 'danger' : null, text: a + ' all ' + page.total + ' matching',
              onclick: function () { bulkMatching(a, status, type, page.total, name); } }), ' ');
          })) : null,
          shown ? messages(lastState || {}, page.messages, 'by-type-list', TYPE_ACTIONS[status], '', name) : null]);
      })
      .catch(function (e) { if (asked === out.asked) morphChildren(out, ['listing failed: ' + e.message]); });
  }

  // Finds one message by id in an inbox (whatever its status) and shows it under the search box.
  function find(name, id, out) {
    if (!id) return;
    var asked = out.asked = (out.asked || 0) + 1;
    var q = '?id=' + encodeURIComponent(id) + (name ? '&inbox=' + encodeURIComponent(name) : '');
    getJson('/api/inbox/messages' + q)
      .then(function (page) {
        if (asked !== out.asked) return;
        var m = page.messages[0];
        morphChildren(out, [m ? h('span', null, h('code', { text: m.id }), ' ' + m.type + ', ' + m.status + ', ' + m.retries + ' retries, inserted ' + ago(m.inserted) + (m.error ? ': ' + m.error : ''))
          : h('span', { 'class': 'muted', text: 'No message ' + id + '.' })]);
      })
      .catch(function (e) { if (asked === out.asked) morphChildren(out, ['search failed: ' + e.message]); });
  }

  // Everything the listing's filter matches, not only the page shown: the count is confirmed first.
  function bulkMatching(action, status, type, total, name) {
    if (!confirm(action + ' all ' + total + ' ' + status + ' message(s) of type ' + type + '?')) return;
    var body = { action: action, matching: { status: status, type: type } };
    if (name) body.inbox = name;
    post('/api/inbox/bulk', body, action + ' all ' + status + ' of type ' + type);
  }
`;
