// The report card of the authorised test key (docs/testing-clients.md#is-my-client-a-good-api-citizen), beside the live
// meter: a row per check with its status (a coloured mark and the word), how often its situation arose and went wrong,
// and on a failed row's click its latest failure and its check's page, whose request opens on a click its exchange
// (its entry in the key's request log, docs/request-log.md); "Start over" sends DELETE /report-card. Below the card,
// the key's latest requests (GET /request-log), read with the card: method, URL, status and the checks each touched,
// and on a click its exchange.
// The page (petstore-docs.js) tells it which key is authorised and asks it to refresh after every answer
// Swagger UI receives; its own requests go through fetch, past Swagger UI, so they refresh nothing.
window.petstoreReportCard = (container) => {
  /** How many of the latest requests the list shows. */
  const LATEST = 10;
  const state = {
    key: '',
    card: null,
    expanded: new Set(),
    folded: false,
    reading: null,
    again: false,
    // The latest requests (entries of the log, newest first), and those whose exchange the list shows.
    log: null,
    logFolded: false,
    logOpen: new Set(),
    // A failure's exchange by check: its request, and the entry once read (or why there is none).
    exchanges: new Map(),
  };
  const panel = document.createElement('section');
  panel.id = 'petstore-card';
  panel.hidden = true;
  panel.setAttribute('aria-labelledby', 'petstore-card-title');
  container.appendChild(panel);
  const logPanel = document.createElement('section');
  logPanel.id = 'petstore-log';
  logPanel.hidden = true;
  logPanel.setAttribute('aria-labelledby', 'petstore-log-title');
  container.appendChild(logPanel);
  // The list's and the exchanges' rules; the panel's box is the page's, with the card's (src/docs/interactive.ts).
  const style = document.createElement('style');
  style.id = 'petstore-log-style';
  style.textContent = `
  .petstore-log__empty { color: #6e7781; }
  .petstore-log__entries { list-style: none; margin: 0; padding: 0; }
  .petstore-log__entry { padding: 3px 0; border-top: 1px solid #eaeef2; }
  .petstore-log__entry:first-child { border-top: 0; }
  .petstore-log__row { display: flex; align-items: baseline; gap: 6px; width: 100%; padding: 0; border: 0; background: none; font: inherit; color: inherit; text-align: left; cursor: pointer; }
  .petstore-log__row:hover .petstore-log__url { text-decoration: underline; }
  .petstore-log__method { flex: none; font-weight: 700; font-size: 11px; }
  .petstore-log__url { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font: 12px/1.4 monospace; }
  .petstore-log__status { flex: none; font-weight: 700; color: var(--petstore-mark); }
  .petstore-log__status--2xx, .petstore-log__check--passed { --petstore-mark: #1a7f37; }
  .petstore-log__status--3xx { --petstore-mark: #6e7781; }
  .petstore-log__status--4xx { --petstore-mark: #bf5600; }
  .petstore-log__status--5xx, .petstore-log__status--none, .petstore-log__check--failed { --petstore-mark: #cf222e; }
  .petstore-log__check--started { --petstore-mark: #1f6feb; }
  .petstore-log__checks { list-style: none; display: flex; flex-wrap: wrap; gap: 0 10px; margin: 0; padding: 0; font-size: 12px; color: #6e7781; }
  .petstore-log__check { display: flex; align-items: baseline; gap: 4px; }
  .petstore-log__check .petstore-card__mark { width: 8px; height: 8px; }
  .petstore-log__exchange { margin: 2px 0 4px; padding: 4px 8px; border-left: 3px solid #d0d7de; background: #f6f8fa; }
  .petstore-card__exchange { display: block; padding: 0; border: 0; background: none; font: inherit; color: #0969da; text-align: left; cursor: pointer; }
  .petstore-card__exchange:hover { text-decoration: underline; }
  .petstore-exchange { overflow-wrap: anywhere; }
  .petstore-exchange__title { margin-top: 4px; font-weight: 700; }
  .petstore-exchange pre { margin: 2px 0 0; padding: 4px 6px; max-height: 240px; overflow: auto; background: #fff; border: 1px solid #eaeef2; border-radius: 4px; font: 11px/1.4 monospace; white-space: pre-wrap; overflow-wrap: anywhere; }
  `;
  document.head.appendChild(style);
  const isTestKey = (key) => typeof key === 'string' && key.startsWith('pet_test_');
  const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const instant = (iso) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

  // An exchange as the log holds it: when, how long and how it ended, then the request and the answer as they went,
  // headers and bodies (a JSON body indented).
  function exchange(entry) {
    const headers = (fields) => Object.entries(fields).map(([name, value]) => `${name}: ${value}\n`);
    const body = (text, type) => {
      if (text === undefined) return '';
      if (!entry.truncated && /json/.test(type ?? ''))
        try {
          return `\n${JSON.stringify(JSON.parse(text), null, 2)}`;
        } catch {
          // Not JSON after all: as it came.
        }
      return `\n${text}`;
    };
    const request =
      `${entry.method} ${entry.url}\n${headers(entry.requestHeaders).join('')}` +
      body(entry.requestBody, entry.requestHeaders['content-type']);
    const response =
      entry.status === null
        ? `No answer: ${entry.ending}`
        : `HTTP ${entry.status}\n${headers(entry.responseHeaders).join('')}` +
          body(entry.responseBody, entry.responseHeaders['content-type']);
    const fault = entry.fault ? ` · ${escape(entry.fault.fault)} injected by ${escape(entry.fault.by)}` : '';
    return (
      `<div class="petstore-exchange" data-request-id="${escape(entry.requestId)}" data-status="${entry.status ?? entry.ending}">` +
      `<div class="petstore-exchange__about">Request <code class="petstore-exchange__id">${escape(entry.requestId)}</code> at ${escape(instant(entry.at))}` +
      ` · ${entry.ms} ms · ${escape(entry.ending)}${fault}</div>` +
      `<div class="petstore-exchange__title">Request</div><pre class="petstore-exchange__request">${escape(request.trimEnd())}</pre>` +
      `<div class="petstore-exchange__title">Response</div><pre class="petstore-exchange__response">${escape(response.trimEnd())}</pre>` +
      `${entry.truncated ? '<div>A body longer than 16 KB is cut.</div>' : ''}</div>`
    );
  }

  // A failure's request, which opens its exchange on a click; one the log no longer holds, as text.
  function failureRequest(check, latest) {
    const request =
      `Request <code class="petstore-card__request">${escape(latest.requestId)}</code> at ` +
      `<span class="petstore-card__at">${escape(instant(latest.at))}</span>`;
    if (!latest.log) return `<div>${request} (no longer in your request log)</div>`;
    const shown = state.exchanges.get(check.id);
    const open = shown?.requestId === latest.requestId;
    const what = !open
      ? ''
      : shown.entry
        ? exchange(shown.entry)
        : `<div class="petstore-card__reading">${escape(shown.error ?? 'Reading…')}</div>`;
    return (
      `<button type="button" class="petstore-card__exchange" data-exchange="${escape(check.id)}" aria-expanded="${open}" aria-controls="petstore-card-exchange-${escape(check.id)}">` +
      `<span aria-hidden="true">${open ? '▾' : '▸'}</span> ${request}</button>` +
      `<div id="petstore-card-exchange-${escape(check.id)}"${open ? '' : ' hidden'}>${what}</div>`
    );
  }

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
      `<div class="petstore-card__detail">${escape(latest.detail)}</div>${failureRequest(check, latest)}` +
      `<a href="${escape(check.docs)}" target="_blank" rel="noopener">About this check</a></div></li>`
    );
  }

  // Drawn anew on each refresh: the button that had the focus (named by one of its data attributes) gets it back.
  function keepingFocus(where, names, draw) {
    const active = where.contains(document.activeElement) ? document.activeElement : null;
    const name = active && names.find((data) => active.dataset[data] !== undefined);
    const value = name && active.dataset[name];
    draw();
    if (name) where.querySelector(`[data-${name}="${CSS.escape(value)}"]`)?.focus();
  }

  function render() {
    renderLog();
    const card = state.card;
    panel.hidden = !isTestKey(state.key) || !card;
    if (panel.hidden) return;
    panel.dataset.requests = card.requests;
    const tally = ['failed', 'passed', 'untested']
      .map((status) => [status, card.checks.filter((check) => check.status === status).length])
      .filter(([, count]) => count > 0)
      .map(([status, count]) => `${count} ${status}`);
    keepingFocus(panel, ['toggle', 'card', 'exchange'], () => {
      panel.innerHTML =
        `<button type="button" class="petstore-meter__title petstore-card__fold" id="petstore-card-title" data-card="fold" aria-expanded="${!state.folded}" aria-controls="petstore-card-body">` +
        `<span aria-hidden="true">${state.folded ? '▸' : '▾'}</span> Your test key's report card</button>` +
        `<div class="petstore-card__since">${card.requests} request${card.requests === 1 ? '' : 's'} graded since ${escape(instant(card.since))}: ${tally.join(', ')}</div>` +
        `<div id="petstore-card-body"${state.folded ? ' hidden' : ''}><ul class="petstore-card__checks">${card.checks.map(row).join('')}</ul>` +
        `<div class="petstore-meter__buttons"><button type="button" data-card="start-over">Start over</button></div></div>`;
    });
  }

  // A request of the list: method, URL, status (or how it ended, with no answer), the checks it touched.
  function logRow(entry, index) {
    const open = state.logOpen.has(entry.requestId);
    const status = entry.status ?? entry.ending;
    const kind = entry.status === null ? 'none' : `${String(entry.status)[0]}xx`;
    const checks = entry.checks.map(
      ({ id, outcome }) =>
        `<li class="petstore-log__check petstore-log__check--${outcome}" data-check="${escape(id)}" data-outcome="${outcome}">` +
        `<span class="petstore-card__mark" aria-hidden="true"></span>${escape(id)} ${outcome}</li>`,
    );
    return (
      `<li class="petstore-log__entry" data-request-id="${escape(entry.requestId)}" data-status="${escape(status)}">` +
      `<button type="button" class="petstore-log__row" data-entry="${escape(entry.requestId)}" aria-expanded="${open}" aria-controls="petstore-log-${index}" title="${escape(entry.url)}">` +
      `<span class="petstore-log__method">${escape(entry.method)}</span><span class="petstore-log__url">${escape(entry.url)}</span>` +
      `<span class="petstore-log__status petstore-log__status--${kind}">${escape(status)}</span></button>` +
      (checks.length ? `<ul class="petstore-log__checks">${checks.join('')}</ul>` : '') +
      `<div class="petstore-log__exchange" id="petstore-log-${index}"${open ? '' : ' hidden'}>${open ? exchange(entry) : ''}</div></li>`
    );
  }

  function renderLog() {
    logPanel.hidden = !isTestKey(state.key) || !state.log;
    if (logPanel.hidden) return;
    const entries = state.log;
    keepingFocus(logPanel, ['entry', 'log'], () => {
      logPanel.innerHTML =
        `<button type="button" class="petstore-meter__title petstore-card__fold" id="petstore-log-title" data-log="fold" aria-expanded="${!state.logFolded}" aria-controls="petstore-log-body">` +
        `<span aria-hidden="true">${state.logFolded ? '▸' : '▾'}</span> Your test key's latest requests</button>` +
        `<div id="petstore-log-body"${state.logFolded ? ' hidden' : ''}>` +
        (entries.length
          ? `<ol class="petstore-log__entries">${entries.map(logRow).join('')}</ol>`
          : '<div class="petstore-log__empty">None yet: each request of your test key shows here.</div>') +
        '</div>';
    });
  }

  // One read at a time (the card and the latest requests together); answers that arrive meanwhile ask for one more
  // read after it.
  async function refresh() {
    if (!isTestKey(state.key)) return;
    if (state.reading) return void (state.again = true);
    const key = state.key;
    const read = (url, keep) =>
      fetch(url, { headers: { 'X-API-Key': key } })
        .then(async (response) => {
          if (response.ok && key === state.key) keep(await response.json());
        })
        .catch((error) => console.warn(`petstore ${url}:`, error));
    state.reading = Promise.all([
      read('/report-card', (card) => (state.card = card)),
      read(`/request-log?limit=${LATEST}`, (page) => (state.log = page.data)),
    ]);
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
    state.exchanges.clear();
    render();
  }

  // A failure's exchange: read from its `log` link, on this page's origin like every read of the panel (the key goes
  // nowhere else); a second click closes it.
  async function toggleExchange(id) {
    const latest = state.card?.checks.find((check) => check.id === id)?.failures[0];
    if (!latest?.log || state.exchanges.get(id)?.requestId === latest.requestId) {
      state.exchanges.delete(id);
      return render();
    }
    const key = state.key;
    const shown = { requestId: latest.requestId };
    state.exchanges.set(id, shown);
    render();
    const link = new URL(latest.log, location.href);
    const response = await fetch(link.pathname + link.search, { headers: { 'X-API-Key': key } }).catch(() => null);
    if (key !== state.key || state.exchanges.get(id) !== shown) return;
    if (response?.ok) shown.entry = await response.json().catch(() => undefined);
    if (!shown.entry)
      shown.error =
        response?.status === 404 ? 'No longer in your request log.' : 'The request log did not answer: try again.';
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
    if (button.dataset.exchange) return void toggleExchange(button.dataset.exchange);
    const id = button.dataset.toggle;
    if (!id) return;
    if (!state.expanded.delete(id)) state.expanded.add(id);
    render();
  });
  logPanel.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('button') : null;
    if (!button) return;
    if (button.dataset.log === 'fold') state.logFolded = !state.logFolded;
    else if (button.dataset.entry && !state.logOpen.delete(button.dataset.entry))
      state.logOpen.add(button.dataset.entry);
    renderLog();
  });
  // Requests of the key sent from elsewhere (a client's tests) show when the page is looked at again.
  document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && void refresh());

  // A key authorised in the page (or '' once logged out): a test key's card is read, any other hides it.
  function authorised(key) {
    if (key === state.key) return void refresh();
    Object.assign(state, { key: key || '', card: null, log: null, again: false });
    state.expanded.clear();
    state.logOpen.clear();
    state.exchanges.clear();
    render();
    void refresh();
  }

  return { authorised, refresh };
};
