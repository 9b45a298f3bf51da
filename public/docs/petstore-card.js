// The report card of the authorised test key (docs/testing-clients.md#is-my-client-a-good-api-citizen), beside the live
// meter: a row per check with its status (a coloured mark and the word), how often its situation arose and went wrong,
// and on a failed row's click its latest failure and its check's page; "Start over" sends DELETE /report-card.
// The page (petstore-docs.js) tells it which key is authorised and asks it to refresh after every answer
// Swagger UI receives; its own requests go through fetch, past Swagger UI, so they refresh nothing.
window.petstoreReportCard = (container) => {
  const state = { key: '', card: null, expanded: new Set(), folded: false, reading: null, again: false };
  const panel = document.createElement('section');
  panel.id = 'petstore-card';
  panel.hidden = true;
  panel.setAttribute('aria-labelledby', 'petstore-card-title');
  container.appendChild(panel);
  const isTestKey = (key) => typeof key === 'string' && key.startsWith('pet_test_');
  const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const instant = (iso) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

  function row(check) {
    const { id, title, status, seen, failed, failures } = check;
    const cells =
      `<span class="petstore-card__mark" aria-hidden="true"></span><span class="petstore-card__name">${escape(title)}</span>` +
      `<span class="petstore-card__status">${status}</span><span class="petstore-card__counts">seen ${seen} · failed ${failed}</span>`;
    const attributes = `class="petstore-card__check petstore-card__check--${status}" data-check="${escape(id)}" data-status="${status}" data-seen="${seen}" data-failed="${failed}"`;
    const latest = failures[0];
    if (status !== 'failed' || !latest) return `<li ${attributes}><div class="petstore-card__row">${cells}</div></li>`;
    const open = state.expanded.has(id);
    return (
      `<li ${attributes}><button type="button" class="petstore-card__row" data-toggle="${escape(id)}" aria-expanded="${open}" aria-controls="petstore-card-${escape(id)}">${cells}</button>` +
      `<div class="petstore-card__failure" id="petstore-card-${escape(id)}"${open ? '' : ' hidden'}>` +
      `<div class="petstore-card__detail">${escape(latest.detail)}</div>` +
      `<div>Request <code class="petstore-card__request">${escape(latest.requestId)}</code> at <span class="petstore-card__at">${escape(instant(latest.at))}</span></div>` +
      `<a href="${escape(check.docs)}" target="_blank" rel="noopener">About this check</a></div></li>`
    );
  }

  function render() {
    const card = state.card;
    panel.hidden = !isTestKey(state.key) || !card;
    if (panel.hidden) return;
    // Drawn anew on each refresh: the button that had the focus gets it back.
    const focused = panel.contains(document.activeElement)
      ? document.activeElement.dataset.toggle || document.activeElement.dataset.card
      : undefined;
    panel.dataset.requests = card.requests;
    const tally = ['failed', 'passed', 'untested']
      .map((status) => [status, card.checks.filter((check) => check.status === status).length])
      .filter(([, count]) => count > 0)
      .map(([status, count]) => `${count} ${status}`);
    panel.innerHTML =
      `<button type="button" class="petstore-meter__title petstore-card__fold" id="petstore-card-title" data-card="fold" aria-expanded="${!state.folded}" aria-controls="petstore-card-body">` +
      `<span aria-hidden="true">${state.folded ? '▸' : '▾'}</span> Your test key's report card</button>` +
      `<div class="petstore-card__since">${card.requests} request${card.requests === 1 ? '' : 's'} graded since ${escape(instant(card.since))}: ${tally.join(', ')}</div>` +
      `<div id="petstore-card-body"${state.folded ? ' hidden' : ''}><ul class="petstore-card__checks">${card.checks.map(row).join('')}</ul>` +
      `<div class="petstore-meter__buttons"><button type="button" data-card="start-over">Start over</button></div></div>`;
    if (focused) panel.querySelector(`[data-toggle="${focused}"], [data-card="${focused}"]`)?.focus();
  }

  // One read at a time; answers that arrive meanwhile ask for one more read after it.
  async function refresh() {
    if (!isTestKey(state.key)) return;
    if (state.reading) return void (state.again = true);
    const key = state.key;
    state.reading = fetch('/report-card', { headers: { 'X-API-Key': key } })
      .then(async (response) => {
        if (response.ok && key === state.key) state.card = await response.json();
      })
      .catch((error) => console.warn('petstore report card:', error));
    await state.reading;
    state.reading = null;
    render();
    if (state.again) {
      state.again = false;
      await refresh();
    }
  }

  async function startOver() {
    const key = state.key;
    const response = await fetch('/report-card', { method: 'DELETE', headers: { 'X-API-Key': key } });
    if (!response.ok || key !== state.key) return;
    state.card = await response.json();
    state.expanded.clear();
    render();
  }

  panel.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('button') : null;
    if (!button) return;
    if (button.dataset.card === 'start-over') return void startOver();
    if (button.dataset.card === 'fold') {
      state.folded = !state.folded;
      return render();
    }
    const id = button.dataset.toggle;
    if (!id) return;
    if (!state.expanded.delete(id)) state.expanded.add(id);
    render();
  });
  // Requests of the key sent from elsewhere (a client's tests) show when the page is looked at again.
  document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && void refresh());

  // A key authorised in the page (or '' once logged out): a test key's card is read, any other hides it.
  function authorised(key) {
    if (key === state.key) return void refresh();
    Object.assign(state, { key: key || '', card: null, again: false });
    state.expanded.clear();
    render();
    void refresh();
  }

  return { authorised, refresh };
};
