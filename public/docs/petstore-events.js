// The authorised key's events as they are written (GET /events/stream, src/event-stream/), in a panel below the report
// card: the latest first, each with its type, id, order and time. The stream is read with fetch and a stream reader (a
// browser's EventSource cannot send X-API-Key) and parsed as the WHATWG HTML standard's event-stream (its fields `id`,
// `event`, `data` and `retry`, comment lines, lines ended by CRLF, LF or CR alike). When the service ends a stream (a
// drop, a graceful stop) or the connection fails, the panel waits the stream's `retry` and reconnects with
// Last-Event-ID, the id of the last event received: the events written meanwhile come first, none shown twice or
// missed.
// Following is asked for with the panel's button: opening the stream is a counted request of the key (graded and
// logged for a test key), which the page does not spend unasked. Logged out, or another key authorised: the stream
// stops and the list empties.
// The page (petstore-docs.js) tells it which key is authorised, the version its requests name, and what to do after
// each answer of the stream (the report card reads itself again).
window.petstoreEvents = (container, { version, answered = () => {} }) => {
  /** How many of the latest events the list shows. */
  const LATEST = 10;
  /** The stream's silence after which its connection is given up: three of the service's 15 s keep-alive comments. */
  const SILENCE_MS = 45_000;
  /** What a stream waits before reconnecting until the service says (its `retry`). */
  const DEFAULT_RETRY_MS = 3_000;
  const state = {
    key: '',
    /** The stream being followed (`follow`), or null. */
    run: null,
    /** idle (not followed), connecting, live, waiting (to reconnect), stopped (the service refused). */
    phase: 'idle',
    note: '',
    /** The id of the last event received: a reconnection resumes after it. */
    lastId: null,
    retryMs: DEFAULT_RETRY_MS,
    /** The wait before the next connection (the stream's `retry`, or a refusal's Retry-After). */
    waitMs: 0,
    /** Streams opened for this key. */
    opened: 0,
    /** The events received, newest first. */
    events: [],
    folded: false,
  };
  const panel = document.createElement('section');
  panel.id = 'petstore-events';
  panel.hidden = true;
  panel.setAttribute('aria-labelledby', 'petstore-events-title');
  container.appendChild(panel);
  // The panel's own rules; its box is the page's, with the card's (src/docs/interactive.ts).
  const style = document.createElement('style');
  style.id = 'petstore-events-style';
  style.textContent = `
  .petstore-events__head { display: flex; align-items: baseline; justify-content: space-between; gap: 8px; }
  .petstore-events__head .petstore-meter__buttons button { margin: 0; }
  .petstore-events__status { margin-bottom: 4px; }
  .petstore-events__status--live::before { content: ''; display: inline-block; width: 8px; height: 8px; margin-right: 6px; border-radius: 50%; background: #2da44e; }
  .petstore-events__status--stopped { color: #cf222e; }
  .petstore-events__empty { color: #6e7781; }
  .petstore-events__entries { list-style: none; margin: 4px 0 0; padding: 0; }
  .petstore-events__entry { padding: 3px 0; border-top: 1px solid #eaeef2; }
  .petstore-events__entry:first-child { border-top: 0; }
  .petstore-events__row { display: flex; align-items: baseline; gap: 6px; }
  .petstore-events__row .petstore-card__mark { width: 8px; height: 8px; }
  .petstore-events__type { flex: 1; min-width: 0; font-weight: 700; }
  .petstore-events__order, .petstore-events__time { flex: none; font-size: 12px; color: #6e7781; }
  .petstore-events__id { display: block; margin-left: 14px; font: 11px/1.4 monospace; color: #6e7781; overflow-wrap: anywhere; }
  .petstore-events__entry--placed { --petstore-mark: #1f6feb; }
  .petstore-events__entry--approved { --petstore-mark: #8250df; }
  .petstore-events__entry--delivered { --petstore-mark: #1a7f37; }
  .petstore-events__entry--cancelled { --petstore-mark: #cf222e; }
  .petstore-events__entry--test { --petstore-mark: #8c959f; }
  `;
  document.head.appendChild(style);
  const isKey = (key) => typeof key === 'string' && key.startsWith('pet_');
  const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const seconds = (ms) => Math.max(0, Math.ceil(ms / 1000));

  function row({ id, type, orderId, endpointId, timestamp }) {
    const kind = type.split('.').pop();
    const subject = orderId !== undefined ? `order ${orderId}` : endpointId !== undefined ? endpointId : '';
    const order = subject ? `<span class="petstore-events__order">${escape(subject)}</span>` : '';
    const time = timestamp
      ? `<time class="petstore-events__time" datetime="${escape(timestamp)}" title="${escape(timestamp)}">${escape(timestamp.slice(11, 19))} UTC</time>`
      : '';
    return (
      `<li class="petstore-events__entry petstore-events__entry--${escape(kind)}" data-event-id="${escape(id)}" data-type="${escape(type)}"` +
      `${orderId === undefined ? '' : ` data-order-id="${escape(orderId)}"`}>` +
      `<div class="petstore-events__row"><span class="petstore-card__mark" aria-hidden="true"></span>` +
      `<span class="petstore-events__type">${escape(type)}</span>${order}${time}</div>` +
      `<code class="petstore-events__id">${escape(id)}</code></li>`
    );
  }

  function status() {
    const after = state.lastId ? ` after <code>${escape(state.lastId)}</code>` : '';
    switch (state.phase) {
      case 'connecting':
        return `Connecting${after}…`;
      case 'live':
        return 'Live: each event shows as it is written.';
      case 'waiting':
        return `${escape(state.note)}: reconnecting in ${seconds(state.waitMs)} s${after}.`;
      case 'stopped':
        return escape(state.note);
      default:
        return state.opened
          ? `Stopped: Follow resumes${after}.`
          : 'Follow shows each event of your key as it is written: one request of your key, and one per reconnection.';
    }
  }

  function render() {
    panel.hidden = !isKey(state.key);
    if (panel.hidden) return;
    Object.assign(panel.dataset, { state: state.phase, opened: state.opened, lastId: state.lastId ?? '' });
    const following = ['connecting', 'live', 'waiting'].includes(state.phase);
    const focused = panel.contains(document.activeElement) ? document.activeElement.dataset.events : undefined;
    panel.innerHTML =
      `<div class="petstore-events__head"><button type="button" class="petstore-meter__title petstore-card__fold" id="petstore-events-title" data-events="fold" aria-expanded="${!state.folded}" aria-controls="petstore-events-body">` +
      `<span aria-hidden="true">${state.folded ? '▸' : '▾'}</span> Your events, live</button>` +
      `<span class="petstore-meter__buttons"><button type="button" data-events="${following ? 'stop' : 'follow'}">${following ? 'Stop' : 'Follow'}</button></span></div>` +
      `<div class="petstore-events__status petstore-events__status--${state.phase}" role="status">${status()}</div>` +
      `<div id="petstore-events-body"${state.folded ? ' hidden' : ''}>` +
      (state.events.length
        ? `<ol class="petstore-events__entries">${state.events.map(row).join('')}</ol>`
        : following
          ? '<div class="petstore-events__empty">None yet: each event of your key shows here as it is written.</div>'
          : '') +
      '</div>';
    if (focused === 'fold') panel.querySelector('[data-events="fold"]').focus();
    else if (focused) panel.querySelector('.petstore-meter__buttons button').focus();
  }

  // An event-stream's lines, as they come: each complete event (its fields up to a blank line) to `dispatch`, with the
  // stream's last event id as it then stands; `retry` to `reconnectIn`. A stream cut inside an event drops that event.
  function eventStreamParser(dispatch, reconnectIn) {
    let buffer = '';
    let data = null;
    let type = '';
    let id;
    function line(text) {
      if (text === '') {
        const event = { id, type: type || 'message', data: data?.join('\n') };
        [data, type] = [null, ''];
        return dispatch(event);
      }
      if (text.startsWith(':')) return;
      const colon = text.indexOf(':');
      const field = colon < 0 ? text : text.slice(0, colon);
      const value = colon < 0 ? '' : text.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') (data ??= []).push(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) reconnectIn(Number(value));
    }
    // `ended`: the stream is over, a CR at its end ends its line (else an LF may follow in the next chunk).
    return (text, ended = false) => {
      buffer += text;
      const breaks = /\r\n|\r|\n/g;
      let from = 0;
      for (let found; (found = breaks.exec(buffer)); from = breaks.lastIndex) {
        if (found[0] === '\r' && found.index === buffer.length - 1 && !ended) break;
        line(buffer.slice(from, found.index));
      }
      buffer = ended ? '' : buffer.slice(from);
    };
  }

  // An event as the list shows it: its id (the frame's), type, order (or a webhook test's endpoint) and time, from its
  // JSON when it is one.
  function received({ id, type, data }) {
    if (id !== undefined) state.lastId = id || null;
    if (data === undefined) return;
    let event = {};
    try {
      event = JSON.parse(data) ?? {};
    } catch {
      // Not an event's JSON: its frame's id and type alone.
    }
    state.events.unshift({
      id: id ?? event.id ?? '',
      type: event.type ?? type,
      orderId: typeof event.data?.id === 'number' ? event.data.id : undefined,
      endpointId: typeof event.data?.endpointId === 'string' ? event.data.endpointId : undefined,
      timestamp: typeof event.timestamp === 'string' ? event.timestamp : '',
    });
    state.events.length = Math.min(state.events.length, LATEST);
    render();
  }

  /** Waits `ms`, unless `signal` aborts first. */
  const pause = (ms, signal) =>
    new Promise((resolve) => {
      const abort = () => (clearTimeout(timer), resolve());
      const timer = setTimeout(() => (signal.removeEventListener('abort', abort), resolve()), ms);
      signal.addEventListener('abort', abort, { once: true });
    });

  // One connection: opened with the last id received, then read until it ends (the service's end, a failure, a silence
  // longer than SILENCE_MS, or `run` stopped). Answers whether to reconnect, and after how long.
  async function connect(run) {
    const connection = new AbortController();
    const cancel = () => connection.abort();
    run.signal.addEventListener('abort', cancel, { once: true });
    try {
      return await connected(run, connection);
    } finally {
      run.signal.removeEventListener('abort', cancel);
    }
  }

  /** `connect`'s request and reading, on `connection`: what follows it (null, the run stopped). */
  async function connected(run, connection) {
    const headers = { 'X-API-Key': run.key, 'Petstore-Version': version, Accept: 'text/event-stream' };
    if (state.lastId) headers['Last-Event-ID'] = state.lastId;
    Object.assign(state, { phase: 'connecting', note: '' });
    render();
    const response = await fetch('/events/stream', { headers, cache: 'no-store', signal: connection.signal }).catch(
      () => null,
    );
    if (run.signal.aborted) return null;
    if (!response) return { wait: state.retryMs, note: 'The connection failed' };
    if (!response.ok || !response.headers.get('content-type')?.startsWith('text/event-stream'))
      return refused(response);
    state.opened++;
    Object.assign(state, { phase: 'live' });
    render();
    answered();
    const parse = eventStreamParser(
      (event) => run === state.run && received(event),
      (ms) => (state.retryMs = ms),
    );
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let silence;
    const heard = () => {
      clearTimeout(silence);
      silence = setTimeout(() => connection.abort(), SILENCE_MS);
    };
    try {
      for (heard(); ; heard()) {
        const { done, value } = await reader.read();
        if (done || run.signal.aborted) break;
        parse(value);
      }
      parse('', true);
    } catch {
      // A connection that failed (or was given up) as one the service ended: its last complete event counts.
    } finally {
      clearTimeout(silence);
    }
    if (run.signal.aborted) return null;
    answered();
    return {
      wait: state.retryMs,
      note: connection.signal.aborted ? 'The stream fell silent' : 'The service ended the stream',
    };
  }

  // A refusal: a wait and another try when it says to wait (429, 503), else the stream stops with its detail.
  async function refused(response) {
    answered();
    const problem = await response.json().catch(() => ({}));
    const detail = problem.detail ?? `GET /events/stream answered ${response.status}`;
    const retryAfter = Number(response.headers.get('retry-after')) * 1000 || 0;
    if ([429, 500, 502, 503, 504].includes(response.status))
      return { wait: Math.max(state.retryMs, retryAfter), note: `Answered ${response.status}` };
    // An id the service no longer keeps: following again starts from now.
    if (response.status === 400 && /event-id-unknown/.test(problem.type ?? '')) state.lastId = null;
    return { stop: `Stopped: ${detail}` };
  }

  // Follows the key's stream until `run` stops: a connection, and after each end its `retry` and the next.
  async function follow(run) {
    while (!run.signal.aborted) {
      const next = await connect(run);
      if (!next || run.signal.aborted) return;
      if (next.stop) {
        Object.assign(state, { phase: 'stopped', note: next.stop, run: null });
        return render();
      }
      Object.assign(state, { phase: 'waiting', note: next.note, waitMs: next.wait });
      render();
      await pause(next.wait, run.signal);
    }
  }

  function start() {
    if (state.run || !isKey(state.key)) return;
    const controller = new AbortController();
    const run = { key: state.key, signal: controller.signal, stop: () => controller.abort() };
    state.run = run;
    void follow(run).catch((error) => console.warn('petstore events:', error));
  }

  function stop() {
    state.run?.stop();
    Object.assign(state, { run: null, phase: 'idle', note: '' });
  }

  panel.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('button') : null;
    const what = button?.dataset.events;
    if (what === 'fold') state.folded = !state.folded;
    else if (what === 'follow') start();
    else if (what === 'stop') stop();
    else return;
    render();
  });

  // A key authorised in the page (or '' once logged out): another key's stream stops, and its events go.
  function authorised(key) {
    const next = isKey(key) ? key : '';
    if (next === state.key) return;
    stop();
    Object.assign(state, { key: next, lastId: null, retryMs: DEFAULT_RETRY_MS, opened: 0, events: [] });
    render();
  }

  return { authorised };
};
