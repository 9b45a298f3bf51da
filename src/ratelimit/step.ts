import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { TalliedCounter } from '../ops/tallies.js';
import { type KeyClock, offsetAt } from '../clock.js';
import { addressCaller, uncountedCaller } from './callers.js';
import { type HeaderList, pushRateLimitHeaders, rateLimitHeaders } from './headers.js';
import type { Sender } from './decision.js';
import { ANONYMOUS_POLICY, type Policy, UNCOUNTED_POLICY } from './plans.js';
import type { LimiterStore } from './store.js';
import type { Verdict } from './verdict.js';
import { mayDeferCount } from '../http/conditional.js';
import type { Connections } from '../http/in-flight.js';
import { fieldNames } from '../http/field-name.js';
import { CACHE_CONTROL_HEADER, NO_STORE } from '../http/responses.js';
import { readSlowly } from '../http/pipelining.js';
import { PROBLEM_CONTENT_TYPE, ProblemError, problemBody } from '../http/problems.js';
import { setHeaders } from '../http/steps.js';

/**
 * The index, the docs, the document, the problem pages, `/usage`, `/versions`, a test key's clock
 * and reset (test-mode/) and its report card (report-card/) count nothing, but still carry the headers.
 */
const UNCOUNTED =
  /^\/($|\?|docs(\/|$|\?)|openapi\.(json|yaml)($|\?)|problems\/|checks\/|usage($|\?)|versions($|\?)|test-clock(\/|$|\?)|test-data($|\?)|report-card($|\?))/;

export function countsTowardLimit(url: string): boolean {
  return !UNCOUNTED.test(url);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** What the limit step decided (or, on a path that counts nothing, saw) for this request. */
    rateLimit: Verdict;
    /** Set by a step before the limit step (a test key's fault, faults/): refuse as if the windows had no room. */
    forcedRefusal?: string;
  }
}

/** The counters a refusal raises (the service's are in ops/metrics.ts). */
export interface RefusalMetrics {
  refusals: Pick<TalliedCounter<'kind' | 'plan'>, 'series'>;
  bans: Pick<TalliedCounter<'plan'>, 'series'>;
}

/** Who the limit step counts a request to, as the first step of every request found out (keys/identify.ts). */
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

/**
 * The limit step, after the caller is known and before the handler: every response gets the rate-limit
 * headers, and a refused request ends here with a `429`, answered on the spot: the cheapest path of
 * all (no exception, no error handler, the invariant parts of the body built once).
 */
export function rateLimitHook(
  limiter: LimiterStore,
  callerOf: (request: FastifyRequest) => Caller,
  settings: LimitSettings,
) {
  const { metrics, publicUrl, clock, connections } = settings;
  const answer = verdictAnswer(metrics, publicUrl, clock);
  /** Where the request came from, for the ban rule's in-flight allowance (../http/in-flight.ts). */
  const senderOf = (request: FastifyRequest): Sender => {
    const { conn, openedAt } = connections.of(request.raw.socket);
    return { real: clock(), conn, openedAt, mark: connections.mark() };
  };
  /** A counted request: answered at once when the limiter decides in memory, else once it has. */
  function limit(
    request: FastifyRequest,
    reply: FastifyReply,
  ): FastifyReply | undefined | Promise<FastifyReply | undefined> {
    const identity = callerOf(request);
    if (
      request.forcedRefusal ||
      (identity.kind === 'key' && mayDeferCount(request)) ||
      !(countsTowardLimit(request.url) || identity.countedEverywhere)
    ) {
      return limitOtherwise(request, reply, identity);
    }
    const { caller, policy, unbanSeq, clock } = identity;
    const sender = senderOf(request);
    const now = limiter.hitNow(caller, policy, unbanSeq, clock, sender);
    if (now) return finish(request, reply, now, identity);
    return limiter
      .hit(caller, policy, unbanSeq, clock, sender)
      .then((verdict) => finish(request, reply, verdict, identity));
  }

  /** A forced refusal, a key's conditional read, or a path that counts nothing. */
  async function limitOtherwise(
    request: FastifyRequest,
    reply: FastifyReply,
    identity: Caller,
  ): Promise<FastifyReply | undefined> {
    const { caller, policy, unbanSeq, clock } = identity;
    // Who a refusal is counted to: the caller, or its throttle of the uncounted paths.
    let counted: Counted = identity;
    let verdict: Verdict;
    if (request.forcedRefusal) {
      verdict = await limiter.refuse(caller, policy, unbanSeq, clock, senderOf(request));
    } else if (identity.kind === 'key' && mayDeferCount(request)) {
      // A key's conditional read: a `304` counts nothing, so only a look now; a banned key is refused
      // as ever; the count is made once the answer is known not to be a `304` (./conditional.ts).
      verdict = await limiter.peek(caller, policy, unbanSeq, clock);
      if (verdict.kind === 'peek' && verdict.bannedUntil !== undefined)
        verdict = await limiter.hit(caller, policy, unbanSeq, clock, senderOf(request));
      else request.countLater = countLater(request, identity);
    } else {
      // The uncounted paths: the caller's own headers, under a throttle of their own, the key's where a
      // valid key is sent, else the address's (an address's caller is its own).
      const throttle = { caller: uncountedCaller(caller), policy: UNCOUNTED_POLICY };
      const throttled = await limiter.hit(throttle.caller, throttle.policy);
      if (isRefusal(throttled)) [verdict, counted] = [throttled, throttle];
      else verdict = await limiter.peek(caller, policy, unbanSeq, clock);
    }
    return finish(request, reply, verdict, counted);
  }

  const finish = (
    request: FastifyRequest,
    reply: FastifyReply,
    verdict: Verdict,
    counted: Counted,
  ): FastifyReply | undefined => {
    const body = answer(request, reply, verdict, counted);
    return body === undefined ? undefined : reply.code(429).send(body);
  };
  /** The count a conditional read left for later (./conditional.ts): the refusal's body, if refused. */
  const countLater = (request: FastifyRequest, identity: Caller) => async (reply: FastifyReply) =>
    answer(
      request,
      reply,
      await limiter.hit(identity.caller, identity.policy, identity.unbanSeq, identity.clock, senderOf(request)),
      identity,
    );

  return limit;
}

/** What the limit step answers with: the refusals' metrics, the problems' base URL, the time and the connections. */
export interface LimitSettings {
  metrics: RefusalMetrics;
  publicUrl: string;
  clock: Clock;
  /** This instance's connections, told apart for the ban rule's in-flight allowance. */
  connections: Connections;
}

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

/** Whom a verdict was for: the caller, or the address's throttle of the uncounted paths. */
type Counted = Pick<Caller, 'caller' | 'policy' | 'clock'>;

export type Refusal = Extract<Verdict, { kind: 'rate-limited' | 'banned' }>;

export function isRefusal(verdict: Verdict): verdict is Refusal {
  return verdict.kind === 'rate-limited' || verdict.kind === 'banned';
}

/** What a `429` carries beyond the rate-limit headers. */
export const REFUSAL_HEADERS = fieldNames({
  [CACHE_CONTROL_HEADER]: NO_STORE,
  'content-type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
});

/** A refusal's metrics, and the log line of the one that starts a ban. */
export function noteRefusal(
  verdict: Refusal,
  { caller, policy }: Pick<Caller, 'caller' | 'policy'>,
  log: { warn(fields: object, message: string): void },
  metrics: RefusalMetrics,
): void {
  if (verdict.kind === 'rate-limited' && verdict.banStarted) {
    const { until, durationMs } = verdict.banStarted;
    log.warn(
      { caller, plan: policy.name, bannedUntil: new Date(until).toISOString(), banSeconds: durationMs / 1000 },
      'caller banned',
    );
    metrics.bans.series({ plan: policy.name }).inc();
  }
  metrics.refusals.series({ kind: verdict.kind, plan: policy.name }).inc();
}

/** The problem body of a refusal of a request for `url`. The problem's fixed members are serialised once. */
export function refusalBody(publicUrl: string) {
  // `{"type":…,"title":…,"status":429`: what every refusal of a kind starts with.
  const head = ({ slug }: ProblemError) => {
    const { detail: _, instance: __, ...fixed } = problemBody(publicUrl, slug, '', '');
    return JSON.stringify(fixed).slice(0, -1);
  };
  const heads = {
    'rate-limited': head(new ProblemError('rate-limited', '')),
    'uncounted-throttled': head(new ProblemError('uncounted-throttled', '')),
    'key-banned': head(new ProblemError('key-banned', '')),
  };
  // The last body made. Every member of a refusal changes by the second at most, so a client that
  // hammers gets the same body many times a second: it is made when something in it changes, not for
  // every refusal (a body made of a dozen parts, a date among them, is a share of a refusal's cost worth saving:
  // docs/performance.md#what-counting-instructions-found).
  let last = {
    verdict: undefined as Refusal | undefined,
    url: '',
    forcedBy: undefined as string | undefined,
    body: '',
  };
  return (verdict: Refusal, url: string, forcedBy?: string): string => {
    if (last.url !== url || last.forcedBy !== forcedBy || !sameBody(verdict, last.verdict))
      last = { verdict, url, forcedBy, body: make(verdict, url, forcedBy) };
    return last.body;
  };

  /** A refusal's body; one a test key asked for says so, as its other forced answers do (faults/step.ts). */
  function make(verdict: Refusal, url: string, forcedBy: string | undefined): string {
    const query = url.indexOf('?');
    const instance = JSON.stringify(query === -1 ? url : url.slice(0, query));
    let members: string;
    let slug: keyof typeof heads = 'key-banned';
    if (verdict.kind === 'rate-limited' && verdict.plan === UNCOUNTED_POLICY.name) {
      const { window, limit, retryAfterSeconds } = verdict;
      slug = 'uncounted-throttled';
      const detail =
        `The paths that count nothing allow ${limit} requests per ${window} (per key, or per address without ` +
        `one). Retry after ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`;
      members = `"detail":"${detail}","instance":${instance},"policy":"${UNCOUNTED_POLICY.name}","window":"${window}","limit":${limit},"retryAfter":${retryAfterSeconds}`;
    } else if (verdict.kind === 'rate-limited') {
      const { window, limit, plan, retryAfterSeconds } = verdict;
      slug = 'rate-limited';
      const forced = forcedBy ? `Injected for this test key (${forcedBy}): ` : '';
      const detail =
        `${forced}The ${plan} plan allows ${limit} requests per ${window}. Retry after ${retryAfterSeconds} ` +
        `second${retryAfterSeconds === 1 ? '' : 's'}.`;
      members = `"detail":"${detail}","instance":${instance},"window":"${window}","limit":${limit},"plan":"${plan}","retryAfter":${retryAfterSeconds}`;
    } else {
      const until = new Date(verdict.bannedUntil).toISOString();
      const detail =
        `Banned until ${until} for sending requests after being rate limited, before the Retry-After it was ` +
        `given. Requests during the ban do not extend it.`;
      members = `"detail":"${detail}","instance":${instance},"retryAfter":${verdict.retryAfterSeconds},"bannedUntil":"${until}"`;
    }
    return `${heads[slug]},${members}}`;
  }
}

/** Whether two refusals (of one URL) have the same body: the members of `refusalBody`. */
function sameBody(a: Refusal, b: Refusal | undefined): boolean {
  if (b === undefined || a.retryAfterSeconds !== b.retryAfterSeconds) return false;
  if (a.kind === 'banned' && b.kind === 'banned') return a.bannedUntil === b.bannedUntil;
  if (a.kind === 'rate-limited' && b.kind === 'rate-limited')
    return a.window === b.window && a.limit === b.limit && a.plan === b.plan;
  return false;
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
