import { hash as digest } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Clock, keyNow, REAL_TIME } from '../clock.js';
import { askedOperation, operationOf } from '../http/method-not-allowed.js';
import type { Connections } from '../http/in-flight.js';
import type { Phases, Stage } from '../http/stages.js';
import { resumedAfter } from '../events/ids.js';
import { IDEMPOTENCY_KEY_HEADER_NAME } from '../idempotency/header.js';
import { REMAINING_HEADER } from '../ratelimit/headers.js';
import { RETRY_AFTER_HEADER } from '../http/responses.js';
import type { Verdict } from '../ratelimit/verdict.js';
import { VERSION_HEADER } from '../versions/versions.js';
import type { Cards } from './cards.js';
import { type Answer, type Arrival, cardStart } from './card.js';
import type { Outcome } from './grade.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * A graded request, from its arrival until its answer is graded: when it came, on which connection
     * (../http/in-flight.ts); `body`, a hash of its body as sent, once read.
     */
    watched: { real: number; conn: number; openedAt: number; body: string | undefined } | undefined;
    /** What grading the request did to the card's checks, once graded (the request log shows it). */
    checked: Outcome[] | undefined;
    /** The grading of a request cut before its answer, under way. */
    grading: Promise<void> | undefined;
  }
}

const IDEMPOTENCY_FIELD = IDEMPOTENCY_KEY_HEADER_NAME.toLowerCase();
const VERSION_FIELD = VERSION_HEADER.toLowerCase();
const CURSOR = /[?&]cursor=/;

/**
 * The report card's stage (docs/testing-clients.md#is-my-client-a-good-api-citizen): how a test key's
 * requests of an API operation that counts reach its card. At the request, right after the caller is known
 * (before a fault's latency, so that its arrival is when it came), its arrival; once its body is read,
 * before validation adds its defaults, a hash of the body as sent; at the answer, last (once the answer is
 * known, before it goes out, so that the key's next request, on any instance, is judged against it), the
 * grading; and a connection cut before the answer. A live key's request meets one test and nothing else;
 * the routes the card does not grade (`config.graded: false`: the test keys' own; those that count
 * nothing) meet nothing at all.
 */
export function cardStage(cards: Cards, clock: Clock, connections: Connections): Stage {
  function arrived(request: FastifyRequest): void {
    const identity = request.identity;
    if (identity.kind !== 'key' || !identity.key.test) return;
    const { conn, openedAt } = connections.of(request.raw.socket);
    request.watched = { real: clock(), conn, openedAt, body: undefined };
  }

  function record(
    request: FastifyRequest,
    operation: string,
    asksToken: boolean,
    stream: boolean,
    facts: Omit<Answer, 'real' | 'key' | 'conn' | 'mark'>,
  ): void | Promise<void> {
    const watched = request.watched!;
    request.watched = undefined;
    const identity = request.identity as Extract<FastifyRequest['identity'], { kind: 'key' }>;
    const keyClock = identity.clock ?? REAL_TIME;
    const real = clock();
    const arrival = arrivalOf(request, watched, keyNow(keyClock, watched.real), operation, asksToken, stream);
    const answer: Answer = {
      ...facts,
      real,
      key: keyNow(keyClock, real),
      conn: watched.conn,
      mark: connections.mark(),
    };
    const outcomes = cards.record(identity.key.id, cardStart(identity.key), { kind: 'graded', arrival, answer });
    if (!(outcomes instanceof Promise)) return void (request.checked = outcomes);
    return outcomes.then((made) => void (request.checked = made));
  }

  return {
    name: 'report-card',
    fields: { watched: undefined, checked: undefined, grading: undefined },
    forRoute(route): Phases {
      if (!route.api || route.counted === false || route.graded === false) return {};
      const operation = operationOf(route);
      const asksToken = route.clientCredentials === true;
      const stream = route.stream === true;
      return {
        onRequest: arrived,
        preValidation: noteBody,
        onSend(request, reply, payload) {
          if (!request.watched) return payload;
          const answer = answerOf(
            request,
            reply,
            typeof payload === 'string' ? payload : undefined,
            operation,
            asksToken,
          );
          // The change never fails (RedisCards says what it could not keep); the answer goes out either way.
          const settled = record(request, operation, asksToken, stream, answer);
          return settled
            ? settled.then(
                () => payload,
                () => payload,
              )
            : payload;
        },
        onRequestAbort(request) {
          if (!request.watched) return;
          const settled = record(request, operation, asksToken, stream, {
            status: 'cut',
            etag: false,
            cursorRefused: false,
          });
          if (settled) request.grading = settled.catch(() => undefined);
        },
      };
    },
  };
}

/** Once the body is read, before validation adds its defaults: a hash of it, as the client sent it. */
function noteBody(request: FastifyRequest): void {
  const { watched, body } = request as FastifyRequest;
  if (watched && body !== undefined) watched.body = hash(JSON.stringify(body));
}

/**
 * A hash of the request's body as sent: '' when it sent none, null
 * when one was sent and not read (a request refused before it).
 */
function bodyOf({ headers }: FastifyRequest, watched: NonNullable<FastifyRequest['watched']>): string | null {
  if (headers['transfer-encoding'] === undefined && !(Number(headers['content-length']) > 0)) return '';
  return watched.body ?? null;
}

/** What the card keeps of a request's parts: 16 characters of their SHA-1 (crypto.hash: one call, no Hash object). */
const hash = (text: string) => digest('sha1', text, 'base64url').slice(0, 16);

function arrivalOf(
  request: FastifyRequest,
  watched: NonNullable<FastifyRequest['watched']>,
  key: number,
  operation: string,
  asksToken: boolean,
  stream: boolean,
): Arrival {
  const { method, url, headers } = request;
  const query = url.indexOf('?');
  const idempotencyKey = headers[IDEMPOTENCY_FIELD];
  return {
    requestId: request.id,
    conn: watched.conn,
    openedAt: watched.openedAt,
    real: watched.real,
    key,
    method,
    path: (query === -1 ? url : url.slice(0, query)).slice(0, 100),
    target: hash(`${method} ${url}`),
    body: bodyOf(request, watched),
    operation: askedOperation(request, operation),
    version: request.apiVersion,
    pinned: headers[VERSION_FIELD] === undefined ? 'none' : request.versionRefusal === 'unknown' ? 'unknown' : 'known',
    idempotencyKey: typeof idempotencyKey === 'string' ? hash(idempotencyKey) : null,
    ifNoneMatch: headers['if-none-match'] !== undefined,
    cursor: CURSOR.test(url),
    asksToken,
    token: (request.identity.kind === 'key' && request.identity.token?.digest) || null,
    ...(stream ? { stream: { after: resumedAfter(headers, request.query)?.slice(0, 64) ?? null } } : {}),
  };
}

/** What the answer about to be sent tells the card; nothing for a request it does not grade. */
function answerOf(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: string | undefined,
  operation: string,
  asksToken: boolean,
): Omit<Answer, 'real' | 'key' | 'conn' | 'mark'> {
  // A connection reset in place of the answer: the client learnt nothing of it (its ETag, its headers).
  if (request.fault?.fault === 'reset') return { status: 'reset', etag: false, cursorRefused: false };
  const status = reply.statusCode;
  const retryAfter = reply.getHeader(RETRY_AFTER_HEADER);
  const problem = status === 400 || status === 410 ? problemOf(payload) : undefined;
  const identity = request.identity;
  const tokenExpired = status === 401 && identity.kind === 'key' && identity.token?.expired !== undefined;
  const verdict = request.rateLimit as Verdict | undefined;
  return {
    status,
    ...(retryAfter === undefined ? {} : { retryAfter: Number(retryAfter) }),
    ...(reply.getHeader(REMAINING_HEADER) === '0' && verdict ? { slotFreeAt: slotFreeAt(verdict) } : {}),
    etag: reply.getHeader('etag') !== undefined,
    ...(verdict?.kind === 'rate-limited' && verdict.banStarted
      ? { banStarted: verdict.banStarted.durationMs / 1000 }
      : {}),
    ...(status === 410
      ? {
          gone: problem?.type?.endsWith('/version-sunset')
            ? { version: request.apiVersion }
            : { operation: askedOperation(request, operation) },
        }
      : {}),
    cursorRefused:
      status === 400 && (problem?.errors ?? []).some((error) => error.in === 'query' && error.name === 'cursor'),
    ...(tokenExpired ? { tokenExpired } : {}),
    ...(asksToken && status === 200 ? { tokenIssued: Number(problemOf(payload)?.expires_in) } : {}),
  };
}

/** The JSON of an answer the card reads: a problem, or a token's. */
function problemOf(
  payload: string | undefined,
): { type?: string; errors?: { in?: string; name?: string }[]; expires_in?: number } | undefined {
  try {
    return payload === undefined ? undefined : JSON.parse(payload);
  } catch {
    return undefined;
  }
}

/** When, in the key's time, the windows with nothing left free a slot again (a ban's end, during one). */
function slotFreeAt(verdict: Verdict): number {
  if (verdict.kind === 'banned') return verdict.bannedUntil;
  if (verdict.kind === 'peek' && verdict.bannedUntil !== undefined) return verdict.bannedUntil;
  let free = verdict.at;
  for (const window of [verdict.minute, verdict.day])
    if (window.remaining === 0) free = Math.max(free, verdict.at + window.nextAdmitInMs);
  if (verdict.kind === 'rate-limited' && verdict.banStarted) free = Math.max(free, verdict.banStarted.until);
  return free;
}
