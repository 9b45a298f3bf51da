// The adapter between the Petstore document and Swagger UI: it shows what Swagger UI does not show by
// itself, each from the document's own extensions, so the page says exactly what the document says.
//   x-tagGroups       → a heading above the first tag of each navigation group
//   x-stability       → a badge on the operation (beta, experimental)
//   deprecated + x-deprecated-sunset → a "deprecated · sunset YYYY-MM-DD" badge
//   x-hideTryItPanel  → no "Try it out" for that operation
//   versions          → the document of the version chosen above the page,
//                     and its Petstore-Version on every "Try it out"
// Beside the operations, in a column at the page's right (#petstore-side): the live meter of the
// authorised key, a test key's report card and latest requests (petstore-card.js), and the key's events as they are
// written (petstore-events.js).
(() => {
  function operationOf(system, path, method) {
    return system.specSelectors.specJson().getIn(['paths', path, method]);
  }

  function badges(system, op) {
    const h = system.React.createElement;
    const out = [];
    const stability = op?.get('x-stability');
    if (stability)
      out.push(
        h(
          'span',
          { key: 's', className: `petstore-badge petstore-badge--${stability}`, 'data-stability': stability },
          stability,
        ),
      );
    if (op?.get('deprecated')) {
      const sunset = op.get('x-deprecated-sunset');
      out.push(
        h(
          'span',
          { key: 'd', className: 'petstore-badge petstore-badge--deprecated', 'data-sunset': sunset || '' },
          sunset ? `deprecated · sunset ${sunset}` : 'deprecated',
        ),
      );
    }
    return out;
  }

  function PetstorePlugin(system) {
    return {
      statePlugins: {
        spec: {
          wrapSelectors: {
            allowTryItOutFor: (original) => (_state, path, method) => {
              const op = operationOf(system, path, method);
              return !(op && op.get('x-hideTryItPanel') === true) && original(path, method);
            },
          },
        },
      },
      wrapComponents: {
        OperationSummaryPath: (Original, sys) => (props) => {
          const p = props.operationProps.toObject();
          const h = sys.React.createElement;
          return h(
            'span',
            { className: 'petstore-summary-path' },
            h(Original, props),
            badges(sys, operationOf(sys, p.path, p.method)),
          );
        },
        // A group is a heading over its tags; its own tag (which holds no operation) is not repeated.
        OperationTag: (Original, sys) => (props) => {
          const h = sys.React.createElement;
          const spec = sys.specSelectors.specJson();
          const groups = spec.get('x-tagGroups');
          if (!groups) return h(Original, props);
          if (groups.some((g) => g.get('name') === props.tag)) return null;
          const group = groups.find((g) => g.get('tags').first() === props.tag);
          if (!group) return h(Original, props);
          const name = group.get('name');
          const tag = spec.get('tags').find((t) => t.get('name') === name);
          return h(
            'section',
            { className: 'petstore-group', 'data-group': name },
            h('h2', { className: 'petstore-group__title' }, name),
            tag?.get('description')
              ? h('p', { className: 'petstore-group__description' }, tag.get('description'))
              : null,
            h(Original, props),
          );
        },
      },
    };
  }

  // The live meter: once a key is authorised, each window of its plan as a bar with what is left and
  // when the next slot frees, and a countdown while a ban (or a 429's Retry-After) lasts. Fed by the
  // rate-limit headers of every response the page receives, and by GET /usage when a key is authorised.
  const meter = (() => {
    // Shown once a key is authorised: before, the headers are the address's, not a key's.
    const state = { windows: {}, until: 0, banned: false, authorised: false, key: '', clock: null };
    const panel = document.createElement('aside');
    panel.id = 'petstore-meter';
    panel.hidden = true;
    document.getElementById('petstore-side').appendChild(panel);
    const seconds = (ms) => Math.max(0, Math.ceil(ms / 1000));

    function render() {
      const now = Date.now();
      const rows = ['minute', 'day']
        .filter((name) => state.windows[name])
        .map((name) => {
          const w = state.windows[name];
          const left = Math.max(0, w.remaining);
          const wait = left > 0 ? 'a slot is free now' : `next slot in ${seconds(w.nextAt - now)} s`;
          return (
            `<div class="petstore-meter__window" data-window="${name}" data-remaining="${left}" data-limit="${w.limit}">` +
            `<div class="petstore-meter__label">${name}: <strong>${left}</strong> of ${w.limit} left · ${wait}</div>` +
            `<div class="petstore-meter__bar"><div class="petstore-meter__fill" style="width:${(100 * left) / w.limit}%"></div></div></div>`
          );
        });
      const waiting = seconds(state.until - now);
      const countdown =
        waiting > 0
          ? `<div class="petstore-meter__countdown" data-seconds="${waiting}" data-banned="${state.banned}">${state.banned ? 'Banned' : 'Rate limited'}: ${waiting} s to wait</div>`
          : '';
      panel.innerHTML = `<div class="petstore-meter__title">Your rate limits</div>${rows.join('')}${countdown}${clockRow()}`;
      panel.hidden = !state.authorised || rows.length === 0;
    }

    // A test key's own clock (GET /test-clock): where it stands, and buttons that move it.
    function clockRow() {
      const clock = state.clock;
      if (!clock) return '';
      const buttons = [
        ['60', '+1 min'],
        ['3600', '+1 h'],
        ['86400', '+1 day'],
      ].map(([seconds, label]) => `<button type="button" data-advance="${seconds}">${label}</button>`);
      buttons.push(
        `<button type="button" data-move="${clock.frozen ? 'resume' : 'freeze'}">${clock.frozen ? 'Resume' : 'Freeze'}</button>`,
      );
      return (
        `<div class="petstore-meter__clock" data-offset="${clock.offsetSeconds}" data-frozen="${clock.frozen}">` +
        `<div class="petstore-meter__label">Your test key's clock: <strong>${clock.now.slice(0, 19).replace('T', ' ')} UTC</strong>` +
        `${clock.frozen ? ' (frozen)' : ''}</div><div class="petstore-meter__buttons">${buttons.join('')}</div></div>`
      );
    }

    async function readClock() {
      if (!state.key.startsWith('pet_test_')) return void (state.clock = null);
      const response = await fetch('/test-clock', { headers: { 'X-API-Key': state.key } });
      state.clock = response.ok ? await response.json() : null;
    }

    // A button of the clock: the move, then the clock and the usage as they now stand.
    panel.addEventListener('click', async (event) => {
      const button = event.target instanceof HTMLElement ? event.target.closest('button') : null;
      if (!button || !state.clock) return;
      const advance = button.dataset.advance;
      const how = advance ? 'advance' : button.dataset.move;
      const init = { method: 'POST', headers: { 'X-API-Key': state.key } };
      if (advance)
        [init.headers['Content-Type'], init.body] = ['application/json', JSON.stringify({ seconds: Number(advance) })];
      const response = await fetch(`/test-clock/${how}`, init);
      if (response.ok) state.clock = await response.json();
      await authorised(state.key);
    });

    // `"minute";q=60;w=60, "day";q=1000;w=86400` and `"minute";r=57;t=60, …`: members by window.
    function items(header) {
      const out = {};
      // A header may come as a string or, from some clients, as a list of its values.
      for (const part of [header ?? ''].flat().join(',').split(',')) {
        const [name, ...params] = part.trim().split(';');
        if (!name) continue;
        out[name.replace(/"/g, '')] = Object.fromEntries(
          params.map((p) => p.split('=')).map(([k, v]) => [k, Number(v)]),
        );
      }
      return out;
    }

    function fromHeaders(headers, status, body) {
      const get = (name) => headers[name] ?? headers[name.toLowerCase()];
      const policy = items(get('RateLimit-Policy'));
      const limits = items(get('RateLimit'));
      const now = Date.now();
      for (const name of Object.keys(policy)) {
        if (!limits[name]) continue;
        const { r, t } = limits[name];
        state.windows[name] = { limit: policy[name].q, remaining: r, nextAt: r > 0 ? now : now + 1000 * t };
      }
      const retryAfter = Number(get('Retry-After'));
      if (status === 429 && retryAfter > 0) {
        state.until = now + 1000 * retryAfter;
        state.banned = /key-banned/.test(typeof body === 'string' ? body : JSON.stringify(body || {}));
      }
      render();
    }

    function fromUsage(usage) {
      for (const name of ['minute', 'day']) {
        const w = usage.windows[name];
        state.windows[name] = { limit: w.limit, remaining: w.remaining, nextAt: Date.parse(w.nextSlotAt) };
      }
      if (usage.ban) [state.until, state.banned] = [Date.parse(usage.ban.until), true];
      render();
    }

    async function authorised(key) {
      if (!key) return;
      state.authorised = true;
      state.key = key;
      await readClock();
      const response = await fetch('/usage', { headers: { 'X-API-Key': key } });
      if (response.ok) fromUsage(await response.json());
      else fromHeaders(Object.fromEntries(response.headers), response.status, await response.text());
    }

    setInterval(() => panel.hidden || render(), 1000);
    return { fromHeaders, authorised };
  })();

  const card = window.petstoreReportCard(document.getElementById('petstore-side'));

  // A key authorised in the page's dialog (or restored from an earlier visit): its usage and, for a
  // test key, its report card at once; logged out, no card.
  function MeterPlugin() {
    const authorised = (schemes) => {
      const key = Object.values(schemes || {})[0]?.value;
      meter.authorised(key);
      card.authorised(key);
      events.authorised(key);
    };
    return {
      statePlugins: {
        auth: {
          wrapActions: {
            authorize: (original) => (payload) => {
              const result = original(payload);
              authorised(payload);
              return result;
            },
            restoreAuthorization: (original) => (payload) => {
              const result = original(payload);
              authorised(payload?.authorized);
              return result;
            },
            logout: (original) => (payload) => {
              const result = original(payload);
              card.authorised('');
              events.authorised('');
              return result;
            },
          },
        },
      },
    };
  }

  // The version shown (`/docs?version=…`, else the newest): its document, and its header on every "Try it out".
  const versionSelect = document.getElementById('petstore-version');
  const asked = new URLSearchParams(location.search).get('version');
  if (asked && [...versionSelect.options].some((option) => option.value === asked)) versionSelect.value = asked;
  const version = versionSelect.value;
  versionSelect.addEventListener('change', () => {
    location.search = `?version=${encodeURIComponent(versionSelect.value)}`;
  });

  // The key's events, in the version shown; each answer of their stream has the card read again.
  const events = window.petstoreEvents(document.getElementById('petstore-side'), {
    version,
    answered: () => void card.refresh(),
  });

  window.ui = SwaggerUIBundle({
    url: `/openapi.json?version=${encodeURIComponent(version)}`,
    requestInterceptor: (request) => {
      if (!new URL(request.url, location.href).pathname.startsWith('/openapi.'))
        request.headers['Petstore-Version'] = version;
      return request;
    },
    dom_id: '#swagger-ui',
    deepLinking: true,
    layout: 'BaseLayout',
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [PetstorePlugin, MeterPlugin],
    // Every answer the page receives moves the meter and has the card read again (the card's and the
    // meter's own requests use fetch, not Swagger UI, so they never come through here: no loop).
    responseInterceptor: (response) => {
      // The meter must never break the page: an answer it cannot read leaves it as it was.
      try {
        meter.fromHeaders(response.headers || {}, response.status, response.text ?? response.data);
      } catch (error) {
        console.warn('petstore meter:', error);
      }
      void card.refresh();
      return response;
    },
    // Nothing leaves this server: no external validator badge.
    validatorUrl: null,
    displayRequestDuration: true,
    persistAuthorization: true,
    showCommonExtensions: true,
  });
})();
