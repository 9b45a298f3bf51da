import {
  type Answer,
  type Arrival,
  type Card,
  type CardChange,
  type Fail,
  failed,
  forgetSituations,
  KEEP,
  keep,
  type Opened,
  sameBody,
  seconds,
  type StreamEnd,
} from './card.js';
import { inFlight } from '../http/in-flight.js';
import {
  CHECK_IDS,
  type CheckId,
  GONE_REPEATS,
  RECENT_MS,
  TIMER_SLACK_MS,
  TOKEN_RENEWAL_MS,
  UNREVALIDATED,
} from './checks.js';
import { judgeRepeats } from './repeats.js';

/**
 * The grader (docs/testing-clients.md#is-my-client-a-good-api-citizen): pure. `grade` folds one graded request of a key
 * into its card (./card.ts), its arrival and its answer together, once the answer is known and before it is sent.
 */

/** What grading one request did to a check (the request log shows it): a situation it started, passed, or failed. */
export interface Outcome {
  id: CheckId;
  outcome: 'started' | 'passed' | 'failed';
  /** A failure's sentence. */
  detail?: string;
}

/** The checks whose situation an answer opens (a `429`, a `410`, a token…): a request that arose one started it. */
const OPENED_BY_ANSWERS: ReadonlySet<CheckId> = new Set<CheckId>([
  'honours-retry-after',
  'not-banned',
  'paces',
  'stops-after-gone',
  'reuses-tokens',
  'renews-expired-tokens',
  'resumes-streams',
]);

/** Folds one graded request into `card` (in place); answers what it did to each check it touched. */
export function grade(card: Card, request: Arrival, answer: Answer): Outcome[] {
  // Each check's counts before: in one array, reused (grading is synchronous, one request at a time).
  CHECK_IDS.forEach((id, i) => {
    BEFORE[2 * i] = card.tallies[id].seen;
    BEFORE[2 * i + 1] = card.tallies[id].failed;
  });
  // The waits a request honoured: judged without a count of their own.
  const judged: CheckId[] = [];
  gradeInto(card, request, answer, judged);
  const outcomes: Outcome[] = [];
  CHECK_IDS.forEach((id, i) => {
    const now = card.tallies[id];
    if (now.failed > BEFORE[2 * i + 1]!) outcomes.push({ id, outcome: 'failed', detail: now.failures[0]!.detail });
    else if (now.seen > BEFORE[2 * i]!) outcomes.push(OPENED_BY_ANSWERS.has(id) ? STARTED[id] : PASSED[id]);
    else if (judged.length > 0 && judged.includes(id)) outcomes.push(PASSED[id]);
  });
  return outcomes;
}

const BEFORE = new Float64Array(2 * CHECK_IDS.length);
/** The outcomes without a sentence: one of each, shared by every request (never changed). */
const outcomesOf = (outcome: 'started' | 'passed') =>
  Object.fromEntries(CHECK_IDS.map((id) => [id, Object.freeze({ id, outcome })])) as Record<CheckId, Outcome>;
const STARTED = outcomesOf('started');
const PASSED = outcomesOf('passed');

function gradeInto(card: Card, request: Arrival, answer: Answer, judged: CheckId[]): void {
  card.requests++;
  const fail = (id: CheckId, detail: string) => failed(card, id, request, detail);
  // OAuth libraries send no Petstore-Version, and a token request is about tokens only.
  if (request.asksToken) return judgeTokenRequest(card, request, answer, fail);
  judgeExpiredTokens(card, request, answer, fail);
  const held = judgeWaits(card, request, fail, judged);
  judgeRepeats(card, request, answer, fail);
  judgeRevalidation(card, request, answer, fail);
  judgeVersion(card, request, fail);
  judgeGone(card, request, answer, fail);
  if (request.stream) judgeResume(card, request, fail, judged);
  if (request.cursor) {
    card.tallies['cursor-untouched'].seen++;
    if (answer.cursorRefused)
      fail('cursor-untouched', `the cursor sent to ${request.path} is not one this API gave this key for this listing`);
  }
  openWaits(card, request, answer, held, fail);
}

/** The latest exam of a webhook receiver: its cases that went wrong, if any. */
export function examined(card: Card, at: number, requestId: string, wrong: readonly string[]): void {
  const tally = card.tallies['webhook-receiver'];
  tally.seen++;
  card.examPassed = wrong.length === 0;
  if (card.examPassed) return;
  failed(
    card,
    'webhook-receiver',
    { requestId, key: at },
    `the exam's ${wrong.join(', ')} case${wrong.length === 1 ? '' : 's'} went wrong`,
  );
}

/**
 * Whether a request waited as a situation asked: `undefined` when it is not the situation's to judge
 * (it arrived before the answer was written, or may have been sent before the client could read it: the
 * in-flight allowance, ../http/in-flight.ts), else whether it came too early.
 */
function tooEarly(opened: Opened, request: Arrival): boolean | undefined {
  if (request.real < opened.sentReal) return undefined;
  if (request.key >= opened.until - TIMER_SLACK_MS) return false;
  if (inFlight(request, writtenOf(opened))) return undefined;
  return true;
}

/** Where and when the answer that opened a situation was written. */
const writtenOf = (opened: Pick<Opened, 'sentReal' | 'conn' | 'mark'>) => ({
  real: opened.sentReal,
  conn: opened.conn,
  mark: opened.mark,
});

/** Which situations a request left open, because they were not its to judge (`tooEarly` answered `undefined`). */
interface Held {
  limited: boolean;
  unavailable: boolean;
  exhausted: boolean;
}

/** `honours-retry-after` and `paces`: a request that came before the wait it was asked for (`judged`: it waited). */
function judgeWaits(card: Card, request: Arrival, fail: Fail, judged: CheckId[]): Held {
  const { limited, unavailable, exhausted } = card;
  const held = { limited: false, unavailable: false, exhausted: false };
  if (limited) {
    const early = tooEarly(limited, request);
    if (early)
      fail(
        'honours-retry-after',
        `sent ${seconds(request.key - limited.sentKey)} after a 429; Retry-After said ${limited.seconds}`,
      );
    if (early === false) judged.push('honours-retry-after');
    if (early !== undefined) card.limited = undefined;
    else held.limited = true;
  }
  if (unavailable && unavailable.target === request.target && sameBody(unavailable.body, request.body)) {
    const early = tooEarly(unavailable, request);
    if (early)
      fail(
        'honours-retry-after',
        `repeated ${seconds(request.key - unavailable.sentKey)} after a 503; Retry-After said ${unavailable.seconds}`,
      );
    if (early === false) judged.push('honours-retry-after');
    if (early !== undefined) card.unavailable = undefined;
    else held.unavailable = true;
  }
  if (exhausted) {
    const early = tooEarly(exhausted, request);
    if (early)
      fail(
        'paces',
        `sent ${seconds(request.key - exhausted.sentKey)} after X-RateLimit-Remaining: 0; the next slot was free ` +
          `${seconds(exhausted.until - exhausted.sentKey)} after it`,
      );
    if (early === false) judged.push('paces');
    if (early !== undefined) card.exhausted = undefined;
    else held.exhausted = true;
  }
  return held;
}

/**
 * `revalidates`: a `GET` of what the key holds an `ETag` of. A `GET` that arrived before the `ETag` was
 * written, or may have been sent before the client could read it (in flight), is none of its business.
 */
function judgeRevalidation(card: Card, request: Arrival, answer: Answer, fail: Fail): void {
  if (request.method !== 'GET') return;
  let entry = card.etags.find((held) => held.target === request.target && request.key - held.sentKey <= RECENT_MS);
  const judged = entry !== undefined && request.real >= entry.sentReal && !inFlight(request, writtenOf(entry));
  if (entry && judged) {
    card.tallies.revalidates.seen++;
    if (request.ifNoneMatch) entry.streak = 0;
    else if (++entry.streak === UNREVALIDATED) {
      entry.streak = 0;
      fail(
        'revalidates',
        `GET ${request.path} ${UNREVALIDATED} times in a row without If-None-Match, its ETag received ` +
          `${seconds(request.key - entry.sentKey)} before`,
      );
    }
  }
  if (!answer.etag) return;
  // The allowance runs from the answer that the client could have read first: a request it does not
  // judge leaves it where it was, so that GETs which keep coming on open connections are judged.
  if (!entry) entry = keep(card.etags, { target: request.target, streak: 0, ...sent(answer) }, KEEP.etags);
  else if (judged) Object.assign(entry, sent(answer));
  entry.sentKey = answer.key;
}

/** When and where an answer was written (real and key time, connection), for the situations it opens. */
const sent = (answer: Answer) => ({ sentReal: answer.real, sentKey: answer.key, conn: answer.conn, mark: answer.mark });

/** `pins-version`. */
function judgeVersion(card: Card, request: Arrival, fail: Fail): void {
  card.tallies['pins-version'].seen++;
  if (request.pinned === 'none') fail('pins-version', `${request.method} ${request.path} carried no Petstore-Version`);
  else if (request.pinned === 'unknown')
    fail('pins-version', `${request.method} ${request.path} named a Petstore-Version this API does not know`);
}

/** `stops-after-gone`: asking again for what answered `410`. */
function judgeGone(card: Card, request: Arrival, answer: Answer, fail: Fail): void {
  for (const entry of card.gone) {
    const operation = entry.what === `operation ${request.operation}`;
    if (!operation && entry.what !== `version ${request.version}`) continue;
    if (++entry.asked === GONE_REPEATS) {
      entry.asked = 0;
      fail(
        'stops-after-gone',
        `asked for ${operation ? request.operation : `version ${request.version}`} ${GONE_REPEATS} more times ` +
          `after its 410`,
      );
    }
    return;
  }
  if (!answer.gone) return;
  card.tallies['stops-after-gone'].seen++;
  const what = 'operation' in answer.gone ? `operation ${answer.gone.operation}` : `version ${answer.gone.version}`;
  keep(card.gone, { what, asked: 0 }, KEEP.gone);
}

/**
 * The situations an answer opens: a `429`, a `503` with `Retry-After`, `X-RateLimit-Remaining: 0`. Where the
 * request left the same situation open (it was not its to judge), the answer extends the wait but keeps the
 * answer the allowance runs from: requests that keep coming on open connections are judged from it.
 */
function openWaits(card: Card, request: Arrival, answer: Answer, held: Held, fail: Fail): void {
  const opened = (until: number, previous: Opened | undefined, keep: boolean): Opened => ({
    ...sent(answer),
    ...(keep && previous ? { sentReal: previous.sentReal, conn: previous.conn, mark: previous.mark } : {}),
    until: keep && previous ? Math.max(previous.until, until) : until,
  });
  if (answer.status === 429) {
    card.tallies['not-banned'].seen++;
    if (answer.banStarted !== undefined)
      fail('not-banned', `banned for ${answer.banStarted} s after sending on through 429s`);
    if (answer.retryAfter !== undefined) {
      card.tallies['honours-retry-after'].seen++;
      const until = answer.key + answer.retryAfter * 1000;
      card.limited = { ...opened(until, card.limited, held.limited), seconds: answer.retryAfter };
    }
  } else if (answer.status === 503 && answer.retryAfter !== undefined) {
    card.tallies['honours-retry-after'].seen++;
    const until = answer.key + answer.retryAfter * 1000;
    card.unavailable = {
      ...opened(until, card.unavailable, held.unavailable),
      seconds: answer.retryAfter,
      target: request.target,
      body: request.body,
    };
  }
  if (answer.slotFreeAt !== undefined) {
    card.tallies.paces.seen++;
    card.exhausted = opened(answer.slotFreeAt, card.exhausted, held.exhausted);
  }
}

/** `reuses-tokens`: a request for a token while the key holds one with time left, concurrent requests included. */
function judgeTokenRequest(card: Card, request: Arrival, answer: Answer, fail: Fail): void {
  const left = card.tokenUntil === undefined ? 0 : card.tokenUntil - request.key;
  if (left > TOKEN_RENEWAL_MS)
    fail('reuses-tokens', `asked for another token while holding one with ${seconds(left)} left`);
  if (answer.tokenIssued === undefined) return;
  card.tallies['reuses-tokens'].seen++;
  card.tokenUntil = Math.max(card.tokenUntil ?? 0, answer.key + answer.tokenIssued * 1000);
}

/** `renews-expired-tokens`: a token sent again after it was refused as expired. */
function judgeExpiredTokens(card: Card, request: Arrival, answer: Answer, fail: Fail): void {
  if (request.token === null) return;
  const refused = card.expiredTokens.find((entry) => entry.token === request.token);
  if (refused && request.real >= refused.sentReal && !inFlight(request, writtenOf(refused)))
    fail(
      'renews-expired-tokens',
      `sent again an access token refused as expired ${seconds(request.key - refused.sentKey)} before`,
    );
  if (!answer.tokenExpired || refused) return;
  card.tallies['renews-expired-tokens'].seen++;
  keep(card.expiredTokens, { token: request.token, ...sent(answer) }, KEEP.expiredTokens);
}

/**
 * `resumes-streams`: the key's next stream after one the service ended opens no sooner than its `retry`, in the key's
 * time, and resumes after the last event sent on it. A stream that arrived before the end was written is another
 * stream, not a reconnection.
 */
function judgeResume(card: Card, request: Arrival, fail: Fail, judged: CheckId[]): void {
  const ended = card.streamEnded;
  if (!ended || request.real < ended.real) return;
  card.streamEnded = undefined;
  const waited = request.key - ended.key;
  const wrong: string[] = [];
  if (waited < ended.retryMs - TIMER_SLACK_MS)
    wrong.push(`reopened ${seconds(waited)} after the service ended it; retry said ${seconds(ended.retryMs)}`);
  const after = request.stream!.after;
  if (ended.lastId !== null && after !== ended.lastId)
    wrong.push(
      `${after === null ? 'reopened without Last-Event-ID' : `resumed after ${after}`}; the last event sent on it was ` +
        ended.lastId,
    );
  if (wrong.length > 0) fail('resumes-streams', `the event stream ${wrong.join(', and ')}`);
  else judged.push('resumes-streams');
}

/** The service ended a stream of the key: the next opening is judged against it. */
function streamEnded(card: Card, ended: StreamEnd): void {
  card.tallies['resumes-streams'].seen++;
  card.streamEnded = ended;
}

/**
 * Applies one change to `card` (in place): a graded request, an exam, or a reset of the key's data; a graded request's
 * outcomes.
 */
export function applyChange(card: Card, change: CardChange): Outcome[] | undefined {
  if (change.kind === 'graded') return grade(card, change.arrival, change.answer);
  if (change.kind === 'examined') examined(card, change.at, change.requestId, change.wrong);
  else if (change.kind === 'streamEnded') streamEnded(card, change.ended);
  else forgetSituations(card);
  return undefined;
}
