import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import { type KeyClock, offsetAt } from '../clock.js';
import { IF_NONE_MATCH_FIELD } from '../http/conditional.js';
import type { Connections } from '../http/in-flight.js';
import { readSlowly } from '../http/pipelining.js';
import type { Phases, RouteConfig, Stage, Step } from '../http/stages.js';
import { setHeaders } from '../http/stages.js';
import { addressCaller, uncountedCaller } from './callers.js';
import type { Sender } from './decision.js';
import { type HeaderList, pushRateLimitHeaders, rateLimitHeaders } from './headers.js';
import { ANONYMOUS_POLICY, type Policy, UNCOUNTED_POLICY } from './plans.js';
import { isRefusal, noteRefusal, REFUSAL_HEADERS, type RefusalMetrics, refusalBody } from './refusal.js';
import type { LimiterStore } from './store.js';
import type { Verdict } from './verdict.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** What the limit stage decided (or, on a path that counts nothing, saw) for this request: set before any handler runs. */
    rateLimit: Verdict;
    /** Set by a stage before the limit stage (a test key's fault, faults/): refuse as if the windows had no room. */
    forcedRefusal: string | undefined;
    /** A key's conditional read whose count waits for its answer (a `304` counts nothing). */
    countDeferred: boolean;
    /** Set by a stage before the limit stage: this request's answer will not be a `304`, so it is counted now. */
    countNow: boolean;
  }
}

/** Who the limit stage counts a request to, as the identify stage found out (keys/identify.ts). */
export interface Caller {
  /** A valid key, or an address without one. */
  kind: 'key' | 'anonymous';
  /** The limiter's name for the caller (ratelimit/callers.ts). */
  caller: string;
  policy: Policy;
  /** Raised by every unban of the caller, wherever it was made; 0 for a caller that cannot be unbanned. */
  unbanSeq: number;
  /** Counted on the paths that count nothing too: a bad key, so that no path lets an address test keys for free. */
  countedEverywhere: boolean;
  /** A test key's clock, as the store held it when the request came (test-mode/); none for a live key or an address. */
  clock?: KeyClock;
}

/** What the limit stage answers with: the refusals' metrics, the problems' base URL, the time and the connections. */
export interface LimitSettings {
  metrics: RefusalMetrics;
  publicUrl: string;
  clock: Clock;
  /** This instance's connections, told apart for the ban rule's in-flight allowance. */
  connections: Connections;
}

/** Whom a verdict was for: the caller, or its throttle of the uncounted paths. */
type Counted = Pick<Caller, 'caller' | 'policy' | 'clock'>;

/**
 * The limit stage (docs/rate-limits.md), after the caller is known and before the handler: every response
 * gets the rate-limit headers, and a refused request ends here with a `429`, answered on the spot (no
 * exception, no error handler, the invariant parts of the body built once). What a route counts is a fact
 * of the route: one that counts is counted to its caller; one that counts nothing (`config.counted: false`)
 * only meets the throttle of such paths, the caller's own (docs/rate-limits.md#uncounted-paths); a
 * conditional read (`config.conditional`) of a key waits for its answer, since a `304` counts nothing.
 */
export function limitStage(
  limiter: LimiterStore,
  callerOf: (request: FastifyRequest) => Caller,
  settings: LimitSettings,
): Stage & { refuse: Step } {
  const { metrics, publicUrl, clock, connections } = settings;
  const answer = verdictAnswer(metrics, publicUrl, clock);
  /** Where the request came from, for the ban rule's in-flight allowance (../http/in-flight.ts). */
  const senderOf = (request: FastifyRequest): Sender => {
    const { conn, openedAt } = connections.of(request.raw.socket);
    return { real: clock(), conn, openedAt, mark: connections.mark() };
  };
  const finish = (request: FastifyRequest, reply: FastifyReply, verdict: Verdict, counted: Counted) => {
    const body = answer(request, reply, verdict, counted);
    return body === undefined ? undefined : reply.code(429).send(body);
  };

  /**
   * A request refused as if the windows had no room (`forcedRefusal` says why), after the stage admitted it: a
   * test key's scripted `429` (faults/stage.ts). The refusal counts toward a ban, as any forced one does.
   */
  function refuse(request: FastifyRequest, reply: FastifyReply) {
    const identity = callerOf(request);
    const { caller, policy, unbanSeq, clock } = identity;
    return limiter
      .refuse(caller, policy, unbanSeq, clock, senderOf(request))
      .then((verdict) => finish(request, reply, verdict, identity));
  }

  /** A request that counts: answered at once when the limiter decides in memory, else once it has. */
  function counted(request: FastifyRequest, reply: FastifyReply) {
    if (request.forcedRefusal) return refuse(request, reply);
    const identity = callerOf(request);
    const { caller, policy, unbanSeq, clock } = identity;
    const sender = senderOf(request);
    const now = limiter.hitNow(caller, policy, unbanSeq, clock, sender);
    if (now) return finish(request, reply, now, identity);
    return limiter
      .hit(caller, policy, unbanSeq, clock, sender)
      .then((verdict) => finish(request, reply, verdict, identity));
  }

  /** A path that counts nothing: the caller's own headers, under a throttle of their own (never a ban). */
  async function uncounted(request: FastifyRequest, reply: FastifyReply) {
    const identity = callerOf(request);
    // A bad key counts against its address everywhere: no path tests keys for free.
    if (identity.countedEverywhere) return counted(request, reply);
    const { caller, policy, unbanSeq, clock } = identity;
    // The key's throttle where a valid key is sent, else the address's (an address's caller is its own).
    const throttle = { caller: uncountedCaller(caller), policy: UNCOUNTED_POLICY };
    const throttled = await limiter.hit(throttle.caller, throttle.policy);
    if (isRefusal(throttled)) return finish(request, reply, throttled, throttle);
    return finish(request, reply, await limiter.peek(caller, policy, unbanSeq, clock), identity);
  }

  /**
   * A conditional read: a key's `GET` with `If-None-Match` is only looked at now, as a `304` counts nothing;
   * a banned key is refused as ever, and the count is made at the answer (`countAtAnswer`) unless it is a `304`.
   */
  function conditional(request: FastifyRequest, reply: FastifyReply) {
    const identity = callerOf(request);
    // A read that names nothing it holds is counted now, as any request (at once, when in memory).
    if (identity.kind !== 'key' || request.forcedRefusal || request.countNow || !mayDefer(request))
      return counted(request, reply);
    const { caller, policy, unbanSeq, clock } = identity;
    return limiter.peek(caller, policy, unbanSeq, clock).then((verdict) => {
      if (verdict.kind === 'peek' && verdict.bannedUntil !== undefined) return counted(request, reply);
      request.countDeferred = true;
      return finish(request, reply, verdict, identity);
    });
  }

  /** The deferred count of a conditional read, once its answer is known: a refusal takes its place. */
  async function countAtAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    if (!request.countDeferred || reply.statusCode === 304) return payload;
    const identity = callerOf(request);
    const { caller, policy, unbanSeq, clock } = identity;
    const verdict = await limiter.hit(caller, policy, unbanSeq, clock, senderOf(request));
    const refusal = answer(request, reply, verdict, identity);
    if (refusal === undefined) return payload;
    // The handler's tag was the representation's: a refusal is not it.
    reply.code(429).removeHeader('etag');
    return refusal;
  }

  const phases = {
    counted: { onRequest: counted },
    uncounted: { onRequest: uncounted },
    conditional: { onRequest: conditional, onSend: countAtAnswer },
  } satisfies Record<string, Phases>;
  return {
    name: 'limit',
    refuse,
    fields: { rateLimit: undefined, forcedRefusal: undefined, countDeferred: false, countNow: false },
    forRoute: (route: RouteConfig) =>
      route.counted === false ? phases.uncounted : route.conditional ? phases.conditional : phases.counted,
  };
}

/** Whether the count of a read may wait for its answer: a `GET` that names the representation it holds. */
const mayDefer = (request: FastifyRequest) =>
  request.method === 'GET' && typeof request.headers[IF_NONE_MATCH_FIELD] === 'string';

/** A verdict's headers on the reply (and on the request, for the handler); for a refusal, its note and its body. */
function verdictAnswer(metrics: RefusalMetrics, publicUrl: string, clock: Clock) {
  const refusal = refusalBody(publicUrl);
  return (request: FastifyRequest, reply: FastifyReply, verdict: Verdict, counted: Counted): string | undefined => {
    request.rateLimit = verdict;
    const headers: HeaderList = [];
    pushRateLimitHeaders(headers, verdict, counted.clock ? offsetAt(counted.clock, clock()) : 0);
    for (let i = 0; i < headers.length; i += 2) reply.header(headers[i] as string, headers[i + 1] as string);
    if (!isRefusal(verdict)) return undefined;
    if (verdict.kind === 'banned') readSlowly(request.raw);
    noteRefusal(verdict, counted, request.log, metrics);
    setHeaders(reply, REFUSAL_HEADERS);
    return refusal(verdict, request.url, request.forcedRefusal);
  };
}

/**
 * The headers of an answer given before a request could be read (http/client-errors.ts): what every
 * answer carries, and the address's rate-limit headers, looked at without counting (what could not be
 * read is not counted); without them when the limiter cannot say.
 */
export function unreadAnswerHeaders(limiter: LimiterStore, always: Readonly<Record<string, string>>) {
  return (address: string): Promise<Readonly<Record<string, string>>> =>
    limiter.peek(addressCaller(address), ANONYMOUS_POLICY).then(
      (verdict) => ({ ...always, ...rateLimitHeaders(verdict) }),
      () => always,
    );
}
