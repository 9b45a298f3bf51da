import { CHECK_IDS, type CheckId } from './checks.js';

/**
 * A test key's report card (docs/testing-clients.md#is-my-client-a-good-api-citizen) as the grader keeps it: what a
 * request tells it, and what it holds between requests. Everything here is bounded, so a card has a fixed size whatever
 * the key sends. Instants are ms: `real` on the service's clock, `key` on the key's (test-mode/).
 */

/** What the card keeps of a request: hashes, never the request's contents. */
export interface Arrival {
  /** Its `X-Request-Id`. */
  requestId: string;
  /** The connection it came on (../http/in-flight.ts), and when that opened (real time). */
  conn: number;
  openedAt: number;
  real: number;
  key: number;
  method: string;
  /** Its path without the query, for the failure's words (at most 100 characters). */
  path: string;
  /** A hash of method and URL (with its query). */
  target: string;
  /** A hash of its body: '' when it sent none, null when it was not read (a request answered before its body). */
  body: string | null;
  /** An operation's name: the method and the route (`GET /pets/:petId`). */
  operation: string;
  /** The version it is answered in. */
  version: string;
  /** `Petstore-Version`: sent and known, sent and unknown, or not sent. */
  pinned: 'known' | 'unknown' | 'none';
  /** A hash of its `Idempotency-Key`, or null. */
  idempotencyKey: string | null;
  ifNoneMatch: boolean;
  cursor: boolean;
  /** A request for an access token (`POST /oauth/token`): graded for `reuses-tokens` only. */
  asksToken: boolean;
  /** A hash of the access token it carried, or null. */
  token: string | null;
  /** An event stream's opening: the id it resumes after (`Last-Event-ID`, or `after`), or null. */
  stream?: { after: string | null };
}

/** What became of it. */
export interface Answer {
  real: number;
  key: number;
  /** The status sent, or what took its place: the connection reset (a fault), or cut by the client. */
  status: number | 'reset' | 'cut';
  /** `Retry-After`, in seconds, when sent. */
  retryAfter?: number;
  /** With `X-RateLimit-Remaining: 0`: when, in the key's time, the binding window frees a slot. */
  slotFreeAt?: number;
  etag: boolean;
  /** This answer started a ban of the key, for this long (s). */
  banStarted?: number;
  /** A `410`: what is gone. */
  gone?: { operation: string } | { version: string };
  /** A `400` for its cursor. */
  cursorRefused: boolean;
  /** An access token issued: its `expires_in` (s, the key's time). */
  tokenIssued?: number;
  /** A `401` for the expired access token the request carried. */
  tokenExpired?: boolean;
  /** The connection it was written on, and the newest connection of its instance then (../http/in-flight.ts). */
  conn: number;
  mark: number;
}

export interface Failure {
  requestId: string;
  at: number;
  detail: string;
}

export interface Tally {
  seen: number;
  failed: number;
  /** The latest failures, newest first. */
  failures: Failure[];
}

/** An event stream the service ended (a drop, a graceful stop, a revocation…): when, and the id to resume from. */
export interface StreamEnd {
  real: number;
  key: number;
  /** The request that opened it. */
  requestId: string;
  /** The last event sent on it (or the one it resumed after): what the next opening must send; null, none. */
  lastId: string | null;
  /** The `retry` it said, in ms. */
  retryMs: number;
  by: string;
}

/** A situation that a later request may spoil: the answer that opened it. */
export interface Opened {
  sentReal: number;
  sentKey: number;
  /** Until when (key time) the key must wait. */
  until: number;
  /** Where the answer was written, for the in-flight allowance (../http/in-flight.ts). */
  conn: number;
  mark: number;
}

export interface Card {
  since: number;
  requests: number;
  tallies: Record<CheckId, Tally>;
  /** After a `429`: the key waits. */
  limited?: Opened & { seconds: number };
  /** After a `503` with `Retry-After`: the same request waits. */
  unavailable?: Opened & { seconds: number; target: string; body: string | null };
  /** After `X-RateLimit-Remaining: 0`. */
  exhausted?: Opened;
  /** Requests being repeated after a `500` or a reset: the waits so far. */
  chains: { target: string; body: string | null; sentKey: number; sentReal: number; waits: number[] }[];
  /** `POST`s that failed without an answer a client can trust. */
  posts: {
    target: string;
    body: string | null;
    idempotencyKey: string | null;
    sentKey: number;
    sentReal: number;
    status: string;
  }[];
  /** URLs whose `ETag` the key received: when, and the `GET`s since without `If-None-Match`. */
  etags: ({ target: string; streak: number } & Pick<Opened, 'sentReal' | 'sentKey' | 'conn' | 'mark'>)[];
  /** What answered `410`, and how often it was asked for since. */
  gone: { what: string; asked: number }[];
  /** Whether the latest exam of a webhook receiver passed. */
  examPassed?: boolean;
  /** Until when (key time) the latest-expiring token issued to the key lives. */
  tokenUntil?: number;
  /** Tokens refused as expired: hashes, and where the refusal was written (for the in-flight allowance). */
  expiredTokens: ({ token: string } & Pick<Opened, 'sentReal' | 'sentKey' | 'conn' | 'mark'>)[];
  /** The latest event stream the service ended, until the key opens the next. */
  streamEnded?: StreamEnd;
}

/**
 * One change of a card, as data, so that whichever instance holds the card applies the changes in the order
 * they reached the store (./redis-cards.ts): a graded request, an exam, or a reset of the key's data.
 */
export type CardChange =
  | { kind: 'graded'; arrival: Arrival; answer: Answer }
  | { kind: 'examined'; at: number; requestId: string; wrong: string[] }
  | { kind: 'streamEnded'; ended: StreamEnd }
  | { kind: 'reset' };

export const KEEP = { failures: 10, chains: 4, posts: 8, etags: 16, gone: 8, expiredTokens: 8 } as const;

/** When a key's card starts, until `DELETE /report-card` starts it over: the key's creation. */
export const cardStart = (key: { createdAt: string }): number => Date.parse(key.createdAt);

export function newCard(since: number): Card {
  const tallies = {} as Record<CheckId, Tally>;
  for (const id of CHECK_IDS) tallies[id] = { seen: 0, failed: 0, failures: [] };
  return { since, requests: 0, tallies, chains: [], posts: [], etags: [], gone: [], expiredTokens: [] };
}

/** A card kept before the checks it lacks existed (Redis keeps a card a month): those checks untested. */
export function upgradedCard(card: Card): Card {
  for (const id of CHECK_IDS) card.tallies[id] ??= { seen: 0, failed: 0, failures: [] };
  card.expiredTokens ??= [];
  return card;
}

/**
 * What a test key's reset (`DELETE /test-data`) leaves of its card: the counts and failures stay (they
 * are the client's), the situations go with the windows, ban and records that opened them.
 */
export function forgetSituations(card: Card): void {
  card.limited = card.unavailable = card.exhausted = undefined;
  card.chains = [];
  card.posts = [];
  card.etags = [];
  card.gone = [];
  card.tokenUntil = undefined;
  card.expiredTokens = [];
  card.streamEnded = undefined;
}

export type CheckStatus = 'passed' | 'failed' | 'untested';

export function statusOf(card: Card, id: CheckId): CheckStatus {
  const { seen, failed } = card.tallies[id];
  // The receiver's check takes the status of its latest exam.
  if (id === 'webhook-receiver' && card.examPassed !== undefined) return card.examPassed ? 'passed' : 'failed';
  return failed > 0 ? 'failed' : seen > 0 ? 'passed' : 'untested';
}

export function failed(card: Card, id: CheckId, request: Pick<Arrival, 'requestId' | 'key'>, detail: string): void {
  const tally = card.tallies[id];
  tally.failed++;
  tally.failures.unshift({ requestId: request.requestId, at: request.key, detail });
  if (tally.failures.length > KEEP.failures) tally.failures.length = KEEP.failures;
}

export type Fail = (id: CheckId, detail: string) => void;

/** A wait, in words: to the hundredth of a second. */
export const seconds = (ms: number) => `${Math.round(ms / 10) / 100} s`;

/** Whether two requests had the same body: a body never read is like no other (the service cannot tell). */
export const sameBody = (a: string | null, b: string | null) => a !== null && a === b;

/** Adds `entry` to `list`, newest last, dropping the oldest beyond `max`; answers it. */
export function keep<T>(list: T[], entry: T, max: number): T {
  list.push(entry);
  if (list.length > max) list.shift();
  return entry;
}
