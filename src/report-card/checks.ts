import { IN_FLIGHT_MS } from '../http/in-flight.js';

/**
 * The checks of a test key's report card (docs/testing-clients.md#is-my-client-a-good-api-citizen), in the card's
 * order: what each watches, its rule, what a good client does and a sketch of it. One place for each check's words:
 * the card's `title` and `advice`, and its page (`/checks/<id>`, ./pages.ts), read them here.
 */
export const CHECK_IDS = [
  'honours-retry-after',
  'not-banned',
  'paces',
  'backs-off',
  'idempotent-retries',
  'revalidates',
  'pins-version',
  'stops-after-gone',
  'cursor-untouched',
  'webhook-receiver',
  'reuses-tokens',
  'renews-expired-tokens',
  'resumes-streams',
] as const;

export type CheckId = (typeof CHECK_IDS)[number];

export interface CheckText {
  title: string;
  /** What the check watches for: the situation that makes it tested. */
  situation: string;
  /** When it goes wrong, with the service's exact rule. */
  rule: string;
  /** One sentence for the card: what to do. */
  advice: string;
  /** A sketch of a good client, in TypeScript. */
  sketch: string;
  /** The same, in Python (the standard library's `urllib`, `time` and `random`). */
  python: string;
}

/**
 * How long a received `ETag`, or a failed `POST`, keeps its
 * situation open (docs/testing-clients.md#is-my-client-a-good-api-citizen).
 */
export const RECENT_MS = 10 * 60_000;
/**
 * The timers' tolerance: a wait this much shorter than asked still
 * counts as the wait (a timer may fire a millisecond early).
 */
export const TIMER_SLACK_MS = 5;
/** `backs-off`: the repeats after one failure that make the situation. */
export const REPEATS = 3;
/** `backs-off`: repeats all this soon after their failure were sent at once. */
export const AT_ONCE_MS = 10;
/** `backs-off`: waits that differ by no more than this, plus `FIXED_PACE_SHARE` of the shortest, are a fixed pace. */
export const FIXED_PACE_MS = 2;
export const FIXED_PACE_SHARE = 0.02;
/** `stops-after-gone`: asking for a gone operation or version this many more times goes wrong. */
export const GONE_REPEATS = 3;
/** `reuses-tokens`: asking for another token while holding one with more than this left (key time) goes wrong. */
export const TOKEN_RENEWAL_MS = 60_000;
/** `revalidates`: this many `GET`s in a row without `If-None-Match` go wrong. */
export const UNREVALIDATED = 3;

const IN_FLIGHT =
  `A request that arrived within ${IN_FLIGHT_MS} ms after that answer, on another connection that was already ` +
  `open when the answer was written, may have been sent before the client could read it, and is forgiven; the ` +
  `allowance runs from the answer that opened the situation, not from later ones. A request on the same ` +
  `connection, or on one opened after the answer, gets no allowance: a client with one request at a time gets ` +
  `none, and a burst of parallel requests written before any answer fails nothing.`;
const KEY_TIME =
  "Waits are measured in your key's time (an advance of its test clock counts as time waited; a frozen clock " +
  'stands still).';

export const CHECKS: Readonly<Record<CheckId, CheckText>> = {
  'honours-retry-after': {
    title: 'Honours Retry-After',
    situation: 'An answer `429`, or a `503` with `Retry-After`.',
    rule:
      `After a \`429\`, any request of the key that arrives before its \`Retry-After\` elapsed goes wrong: the ` +
      `limit is the key's, not the request's. After a \`503\`, the same request (method, path and body) repeated ` +
      `before its \`Retry-After\` elapsed goes wrong. ${IN_FLIGHT} ${KEY_TIME} (A timer may fire ${TIMER_SLACK_MS} ` +
      `ms early.)`,
    advice:
      'After a 429, send nothing with this key until Retry-After has elapsed; after a 503, wait Retry-After before ' +
      'repeating the request.',
    sketch: `const answer = await fetch(url, init);
if (answer.status === 429 || answer.status === 503) {
  const seconds = Number(answer.headers.get('Retry-After') ?? 1);
  pausedUntil = clock() + seconds * 1000;   // every request of the key waits for this
}
// before every request:
await sleep(Math.max(0, pausedUntil - clock()));`,
    python: `answer = send(request)                                   # urllib: an HTTPError is an answer too
if answer.status in (429, 503):
    paused_until = time.monotonic() + float(answer.headers.get('Retry-After', '1'))
# before every request of the key:
time.sleep(max(0.0, paused_until - time.monotonic()))`,
  },
  'not-banned': {
    title: 'Never banned',
    situation: 'An answer `429`.',
    rule:
      'The key is banned: it kept sending after being rate limited, before the `Retry-After` of its previous ' +
      '`429` had passed, as many times as the ban rule allows (see `/problems/key-banned`). A `429` for a ' +
      'request sent after the previous wait passed, or forgiven as in flight (see `honours-retry-after`), counts ' +
      'toward no ban: a client that waits every `Retry-After` it is given is never banned, however many `429`s ' +
      'it meets.',
    advice: 'Stop at the first 429 and wait its Retry-After: a client that does is never banned.',
    sketch: `// One gate for the whole key: a 429 on any request pauses them all.
if (answer.status === 429) gate.pauseFor(Number(answer.headers.get('Retry-After')) * 1000);`,
    python: `# One gate for the whole key: a 429 on any request pauses them all.
if answer.status == 429:
    gate.pause_for(float(answer.headers['Retry-After']))`,
  },
  paces: {
    title: 'Paces itself',
    situation: 'An answer with `X-RateLimit-Remaining: 0`.',
    rule:
      `A request of the key that arrives before the binding window frees a slot goes wrong (the \`429\` it earns ` +
      `was announced). The \`RateLimit\` header's \`t\` says when: with \`r=0\`, the seconds until the next slot. ` +
      `${IN_FLIGHT} ${KEY_TIME}`,
    advice:
      'When X-RateLimit-Remaining is 0, wait until the window frees a slot (RateLimit t=) before the next request.',
    sketch: `const remaining = Number(answer.headers.get('X-RateLimit-Remaining'));
if (remaining === 0) {
  // RateLimit: "minute";r=0;t=12, "day";r=940;t=50000: wait the largest t of a window with r=0
  const waits = [...answer.headers.get('RateLimit')!.matchAll(/r=0;t=(\\d+)/g)].map((m) => Number(m[1]));
  pausedUntil = clock() + Math.max(...waits) * 1000;
}`,
    python: `if answer.headers.get('X-RateLimit-Remaining') == '0':
    # RateLimit: "minute";r=0;t=12, "day";r=940;t=50000: wait the largest t of a window with r=0
    waits = [int(t) for t in re.findall(r'r=0;t=(\\d+)', answer.headers['RateLimit'])]
    paused_until = time.monotonic() + max(waits)`,
  },
  'backs-off': {
    title: 'Backs off',
    situation: `A request repeated ${REPEATS} times (same method, path and body) after a \`500\` or a reset connection.`,
    rule:
      `The ${REPEATS} waits (each from the failed answer to the next repeat's arrival) do not back off: all within ` +
      `${AT_ONCE_MS} ms (at once), or all the same to within ${FIXED_PACE_MS} ms plus ${FIXED_PACE_SHARE * 100} % ` +
      `of the shortest (a fixed pace). A client waiting base × 2^n (base 100 ms to 1 s) with full or equal jitter ` +
      `passes in at least 999 of 1,000 runs (the suite's seeded simulation: test/report-card/backs-off.unit.test.ts); ` +
      `one repeating at once or at a fixed interval fails in all. ${KEY_TIME}`,
    advice:
      'Retry a 500 or a reset connection after an exponentially growing, jittered wait, not at once or at a fixed ' +
      'pace.',
    sketch: `for (let attempt = 0; ; attempt++) {
  const answer = await send().catch(() => undefined);        // a reset connection: no answer
  if (answer && answer.status < 500) return answer;
  if (attempt === 4) throw new Error('gave up');
  const cap = 100 * 2 ** attempt;                             // ms: base × 2^n
  await sleep(Math.random() * cap);                           // full jitter
}`,
    python: `for attempt in range(5):
    try:
        answer = send(request)                                # a reset connection raises
        if answer.status < 500:
            return answer
    except ConnectionError:
        pass
    time.sleep(random.uniform(0, 0.1 * 2 ** attempt))       # full jitter: base 100 ms × 2^n
raise RuntimeError('gave up')`,
  },
  'idempotent-retries': {
    title: 'Retries POSTs idempotently',
    situation:
      'A `POST` repeated (same path and body) within 10 minutes of an answer that was not `2xx` or `4xx`, or of a ' +
      'connection reset or cut before the answer.',
    rule:
      'The repeat carries no `Idempotency-Key`, or another one than the first try: the first try may have been ' +
      'carried out, and only the same key lets the service answer the repeat with its result instead of doing it ' +
      'twice.',
    advice: 'Send an Idempotency-Key with every POST, and the same one on each retry of it.',
    sketch: `const idempotencyKey = crypto.randomUUID();                 // once per operation, not per attempt
await retry(() => fetch(url, { method: 'POST', body, headers: { 'Idempotency-Key': idempotencyKey } }));`,
    python: `idempotency_key = str(uuid.uuid4())                      # once per operation, not per attempt
headers = {'Idempotency-Key': idempotency_key, 'Content-Type': 'application/json'}
answer = retry(lambda: send(Request(url, data=body, method='POST', headers=headers)))`,
  },
  revalidates: {
    title: 'Revalidates with If-None-Match',
    situation: 'A `GET` of a URL whose `ETag` the key received in the last 10 minutes.',
    rule:
      `The ${UNREVALIDATED === 3 ? 'third' : UNREVALIDATED + 'th'} such \`GET\` in a row without \`If-None-Match\` ` +
      `goes wrong (a \`304\` counts nothing toward the limits and carries no body). A \`GET\` that arrived before ` +
      `the \`ETag\` was written, or within ${IN_FLIGHT_MS} ms after it on another connection already open then, ` +
      `is not counted: it may have been sent before the client could read the \`ETag\`.`,
    advice: 'Keep the ETag of what you read and send it back as If-None-Match; a 304 means your copy is current.',
    sketch: `const cached = cache.get(url);
const answer = await fetch(url, { headers: cached ? { 'If-None-Match': cached.etag } : {} });
if (answer.status === 304) return cached.body;
cache.set(url, { etag: answer.headers.get('ETag'), body: await answer.json() });`,
    python: `cached = cache.get(url)
headers = {'If-None-Match': cached['etag']} if cached else {}
answer = send(Request(url, headers=headers))
if answer.status == 304:
    return cached['body']
cache[url] = {'etag': answer.headers['ETag'], 'body': json.load(answer)}`,
  },
  'pins-version': {
    title: 'Pins a version',
    situation: 'Any request.',
    rule:
      'The request carries no `Petstore-Version` header, or one naming no version this API knows. Any known ' +
      "version satisfies it; without one, the key's pinned version answers, and a change of that pin changes your " +
      'answers.',
    advice: 'Send Petstore-Version with every request: the version your client was written against.',
    sketch: `const headers = { 'X-API-Key': key, 'Petstore-Version': '2026-11-26' };   // on every request`,
    python: `headers = {'X-API-Key': key, 'Petstore-Version': '2026-11-26'}   # on every request`,
  },
  'stops-after-gone': {
    title: 'Stops after 410 Gone',
    situation: 'An answer `410` (an operation past its sunset, or a version past its sunset).',
    rule:
      `The key asks for the same gone operation, or in the same gone version, ${GONE_REPEATS} more times. A ` +
      `\`410\` is for good: retrying it never helps.`,
    advice: 'Treat a 410 as permanent: stop calling that operation (or move to a newer version) instead of retrying.',
    sketch: `if (answer.status === 410) {
  gone.add(operationId);                      // never call it again
  throw new GoneError(await answer.json());   // surface it: a person must move the code on
}`,
    python: `if answer.status == 410:
    gone.add(operation_id)                   # never call it again
    raise GoneError(json.load(answer))       # surface it: a person must move the code on`,
  },
  'cursor-untouched': {
    title: 'Leaves cursors untouched',
    situation: 'A request with `cursor`.',
    rule:
      'The cursor is not one the service gave this key, for this listing (the same collection and filters): ' +
      "edited, made up, or another key's.",
    advice: 'Pass nextCursor back exactly as received, with the same filters; never build or edit a cursor.',
    sketch: `let cursor: string | undefined;
do {
  const page = await list({ status: 'available', cursor });   // the same filters on every page
  handle(page.data);
  cursor = page.nextCursor ?? undefined;
} while (cursor);`,
    python: `cursor = None
while True:
    query = {'status': 'available', **({'cursor': cursor} if cursor else {})}   # the same filters on every page
    page = get_json('/pets?' + urlencode(query))
    handle(page['data'])
    cursor = page.get('nextCursor')
    if not cursor:
        break`,
  },
  'webhook-receiver': {
    title: 'Webhook receiver passes its exam',
    situation: "An exam of one of the key's webhook endpoints (`POST /webhook-endpoints/{endpointId}/exam`).",
    rule:
      'Any case of the latest exam went wrong: a receiver must answer `2xx` to a valid delivery and to a ' +
      'duplicate, and `4xx` to a wrong secret, an unsigned, stale (10 minutes old), future (10 minutes ahead) or ' +
      'tampered delivery, and `2xx` to one with two signatures of which the second is valid. The check takes the ' +
      'status of the latest exam.',
    advice:
      'Verify every delivery as Standard Webhooks says (signature over id.timestamp.body, a 5-minute tolerance, ' +
      'any of the signatures), and acknowledge a duplicate.',
    sketch: `import { Webhook } from 'standardwebhooks';
const verifier = new Webhook(secret);                         // whsec_…
try {
  const event = verifier.verify(rawBody, headers);           // throws on a bad, missing, stale or future signature
  if (!seen.has(headers['webhook-id'])) handle(event);        // a duplicate: acknowledged, not handled twice
  reply(204);
} catch { reply(400); }`,
    python: `from standardwebhooks import Webhook      # pip install standardwebhooks
verifier = Webhook(secret)                 # whsec_…
try:
    event = verifier.verify(raw_body, headers)   # raises on a bad, missing, stale or future signature
    if headers['webhook-id'] not in seen:
        handle(event)                            # a duplicate: acknowledged, not handled twice
    reply(204)
except Exception:
    reply(400)`,
  },
  'reuses-tokens': {
    title: 'Reuses access tokens',
    situation: 'An access token issued to the key (`POST /oauth/token`).',
    rule:
      `The key asks for another token while it holds one with more than ${TOKEN_RENEWAL_MS / 1000} s left, in its ` +
      'time: its callers each fetch their own, or it renews long before expiry. Concurrent requests are included: ' +
      'eight parallel callers that each ask for a token at once fail it seven times; there is no in-flight ' +
      'allowance here, because one shared request for a token is what a good client sends.',
    advice:
      'Keep one token for all your callers and renew it once, behind a shared promise, shortly before expires_in ' +
      'runs out.',
    sketch: `let shared: Promise<{ value: string; until: number }> | undefined;
async function accessToken(): Promise<string> {
  const asked = (shared ??= fetchToken());
  const token = await asked;
  if (token.until - clock() > 30_000) return token.value;        // still good: every caller reuses it
  if (shared === asked) shared = fetchToken();                    // the first to see it old renews, for all
  return (await shared).value;
}
async function fetchToken() {
  const answer = await fetch(tokenUrl, { method: 'POST', headers: { Authorization: basic }, body: form });
  const { access_token, expires_in } = await answer.json();
  return { value: access_token, until: clock() + expires_in * 1000 };
}`,
    python: `lock = threading.Lock()
held = None                                      # (token, until)

def access_token():
    global held
    with lock:                                   # one renewal for every caller
        if held is None or held[1] - time.monotonic() < 30:
            answer = requests.post(token_url, data={'grant_type': 'client_credentials'}, auth=(key_id, key))
            body = answer.json()
            held = (body['access_token'], time.monotonic() + body['expires_in'])
        return held[0]`,
  },
  'renews-expired-tokens': {
    title: 'Renews expired tokens',
    situation: 'A `401` `invalid_token` for an expired access token of the key.',
    rule: `The key sends that token again: an expired token never comes back to life. ${IN_FLIGHT}`,
    advice: 'After a 401 invalid_token, get a new token once and send it instead; never resend the refused one.',
    sketch: `let answer = await call(await accessToken());
if (answer.status === 401 && /invalid_token/.test(answer.headers.get('WWW-Authenticate') ?? '')) {
  forgetToken();                                   // the next accessToken() renews, once for every caller
  answer = await call(await accessToken());
}`,
    python: `answer = call(access_token())
if answer.status_code == 401 and 'invalid_token' in answer.headers.get('WWW-Authenticate', ''):
    forget_token()                               # the next access_token() renews, once for every caller
    answer = call(access_token())`,
  },
  'resumes-streams': {
    title: 'Resumes event streams',
    situation:
      'An event stream of the key (`GET /events/stream`) ended by the service: a drop, a graceful stop, the ' +
      "key's revocation. A client's own close is not one.",
    rule:
      "The key opens its next stream sooner than the stream's `retry` (3 s) after the end, in its time, or without " +
      'the id of the last event sent on the ended stream (`Last-Event-ID`, or `after`; when none was sent, the id ' +
      `it had resumed after). ${KEY_TIME} (A timer may fire ${TIMER_SLACK_MS} ms early.)`,
    advice:
      "After a stream ends, wait its retry, then reconnect with Last-Event-ID set to the last event's id: the " +
      'events you missed come first, none twice.',
    sketch: `import { EventSource } from 'eventsource';         // WHATWG: waits retry, sends Last-Event-ID by itself
const events = new EventSource(url + '/events/stream', {
  fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, 'X-API-Key': key } }),
});
events.addEventListener('order.approved', (message) => handle(JSON.parse(message.data)));`,
    python: `last_id, retry = None, 3.0
while True:
    headers = {'X-API-Key': key, 'Accept': 'text/event-stream', **({'Last-Event-ID': last_id} if last_id else {})}
    with requests.get(url + '/events/stream', headers=headers, stream=True) as answer:
        for line in answer.iter_lines(decode_unicode=True):
            if line.startswith('retry: '): retry = int(line[7:]) / 1000
            elif line.startswith('id: '): last_id = line[4:]
            elif line.startswith('data: '): handle(json.loads(line[6:]))
    time.sleep(retry)                          # the stream ended: wait its retry, then resume after last_id`,
  },
};
