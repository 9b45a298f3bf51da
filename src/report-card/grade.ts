import {
  type Answer,
  type Arrival,
  type Card,
  type Fail,
  failed,
  KEEP,
  keep,
  type Opened,
  sameBody,
  seconds,
} from './card.js';
import { type CheckId, GONE_REPEATS, IN_FLIGHT_MS, RECENT_MS, TIMER_SLACK_MS, UNREVALIDATED } from './checks.js';
import { judgeRepeats } from './repeats.js';

/**
 * The grader (docs/testing-clients.md#is-my-client-a-good-api-citizen): pure. `grade` folds one graded request of a key
 * into its card (./card.ts), its arrival and its answer together, once the answer is known and before it is sent.
 */

/** Folds one graded request into `card` (in place). */
export function grade(card: Card, request: Arrival, answer: Answer): void {
  card.requests++;
  const fail = (id: CheckId, detail: string) => failed(card, id, request, detail);
  judgeWaits(card, request, fail);
  judgeRepeats(card, request, answer, fail);
  judgeRevalidation(card, request, answer, fail);
  judgeVersion(card, request, fail);
  judgeGone(card, request, answer, fail);
  if (request.cursor) {
    card.tallies['cursor-untouched'].seen++;
    if (answer.cursorRefused)
      fail('cursor-untouched', `the cursor sent to ${request.path} is not one this API gave this key for this listing`);
  }
  openWaits(card, request, answer, fail);
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
 * (sent before the answer reached the client), else whether it came too early.
 */
function tooEarly(opened: Opened, request: Arrival): boolean | undefined {
  if (request.real < opened.sentReal) return undefined;
  if (request.key >= opened.until - TIMER_SLACK_MS) return false;
  // In flight: sent, on another connection, before the answer could be read.
  if (opened.crowded && request.connection !== opened.connection && request.real - opened.sentReal <= IN_FLIGHT_MS)
    return undefined;
  return true;
}

/** `honours-retry-after` and `paces`: a request that came before the wait it was asked for. */
function judgeWaits(card: Card, request: Arrival, fail: Fail): void {
  const { limited, unavailable, exhausted } = card;
  if (limited) {
    const early = tooEarly(limited, request);
    if (early)
      fail(
        'honours-retry-after',
        `sent ${seconds(request.key - limited.sentKey)} after a 429; Retry-After said ${limited.seconds}`,
      );
    if (early !== undefined) card.limited = undefined;
  }
  if (unavailable && unavailable.target === request.target && sameBody(unavailable.body, request.body)) {
    const early = tooEarly(unavailable, request);
    if (early)
      fail(
        'honours-retry-after',
        `repeated ${seconds(request.key - unavailable.sentKey)} after a 503; Retry-After said ${unavailable.seconds}`,
      );
    if (early !== undefined) card.unavailable = undefined;
  }
  if (exhausted) {
    const early = tooEarly(exhausted, request);
    if (early)
      fail(
        'paces',
        `sent ${seconds(request.key - exhausted.sentKey)} after X-RateLimit-Remaining: 0; the next slot was free ` +
          `${seconds(exhausted.until - exhausted.sentKey)} after it`,
      );
    if (early !== undefined) card.exhausted = undefined;
  }
}

/** `revalidates`: a `GET` of what the key holds an `ETag` of. */
function judgeRevalidation(card: Card, request: Arrival, answer: Answer, fail: Fail): void {
  if (request.method !== 'GET') return;
  let entry = card.etags.find((held) => held.target === request.target && request.key - held.sentKey <= RECENT_MS);
  if (entry) {
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
  if (!entry) entry = keep(card.etags, { target: request.target, sentKey: answer.key, streak: 0 }, KEEP.etags);
  entry.sentKey = answer.key;
}

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

/** The situations an answer opens: a `429`, a `503` with `Retry-After`, `X-RateLimit-Remaining: 0`. */
function openWaits(card: Card, request: Arrival, answer: Answer, fail: Fail): void {
  const opened = (until: number): Opened => ({
    sentReal: answer.real,
    sentKey: answer.key,
    until,
    crowded: answer.crowded,
    connection: request.connection,
  });
  if (answer.status === 429) {
    card.tallies['not-banned'].seen++;
    if (answer.banStarted !== undefined)
      fail('not-banned', `banned for ${answer.banStarted} s after sending on through 429s`);
    if (answer.retryAfter !== undefined) {
      card.tallies['honours-retry-after'].seen++;
      card.limited = { ...opened(answer.key + answer.retryAfter * 1000), seconds: answer.retryAfter };
    }
  } else if (answer.status === 503 && answer.retryAfter !== undefined) {
    card.tallies['honours-retry-after'].seen++;
    card.unavailable = {
      ...opened(answer.key + answer.retryAfter * 1000),
      seconds: answer.retryAfter,
      target: request.target,
      body: request.body,
    };
  }
  if (answer.slotFreeAt !== undefined) {
    card.tallies.paces.seen++;
    card.exhausted = opened(answer.slotFreeAt);
  }
}
