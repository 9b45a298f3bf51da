import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../ops/metrics.js';
import { rateLimitHeaders } from '../ratelimit/headers.js';
import { DOCUMENTATION_POLICY } from '../ratelimit/plans.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { Verdict } from '../ratelimit/verdict.js';
import type { Identity } from './identity.js';
import { PROBLEM_CONTENT_TYPE, problemBody, ProblemError } from './problems.js';

/** The index, the docs, the document and the problem pages count nothing, but still carry the headers. */
const UNCOUNTED = /^\/($|\?|docs(\/|$|\?)|openapi\.(json|yaml)($|\?)|problems\/)/;

export function countsTowardLimit(url: string): boolean {
  return !UNCOUNTED.test(url);
}

/**
 * The limit step, after `identify` and before the handler: every response gets the rate-limit
 * headers, and a refused request ends here with a `429`, answered on the spot: the cheapest path of
 * all (no exception, no error handler, the invariant parts of the body built once). The fast lane
 * (./fast-lane.ts) answers the same refusals with the same parts.
 */
export function rateLimitHook(limiter: LimiterStore, metrics: Metrics, publicUrl: string) {
  const refusal = refusalBody(publicUrl);
  return async function limit(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const identity = request.identity;
    const { caller, policy } = identity;
    // An unban made anywhere (admin API, CLI, another instance) travels on the key's row.
    const unbanSeq = identity.kind === 'key' ? identity.key.unbanSeq : 0;
    // Who a refusal is counted to: the caller, or the address's throttle of the uncounted paths.
    let counted: Pick<Identity, 'caller' | 'policy'> = identity;
    let verdict: Verdict;
    // A bad key counts against its address on every path: no path lets an address test keys for free.
    if (countsTowardLimit(request.url) || (identity.kind === 'anonymous' && identity.badKey)) {
      verdict = await limiter.hit(caller, policy, unbanSeq);
    } else {
      // The uncounted paths: the caller's own headers, under the address's throttle of their own.
      const throttle = { caller: `documentation:ip:${request.ip}`, policy: DOCUMENTATION_POLICY };
      const throttled = await limiter.hit(throttle.caller, throttle.policy);
      if (isRefusal(throttled)) [verdict, counted] = [throttled, throttle];
      else verdict = await limiter.peek(caller, policy, unbanSeq);
    }
    reply.headers(rateLimitHeaders(verdict));
    if (!isRefusal(verdict)) return undefined;
    noteRefusal(verdict, counted, request.log, metrics);
    return reply.code(429).headers(REFUSAL_HEADERS).send(refusal(verdict, request.url));
  };
}

export type Refusal = Extract<Verdict, { kind: 'rate-limited' | 'banned' }>;

export function isRefusal(verdict: Verdict): verdict is Refusal {
  return verdict.kind === 'rate-limited' || verdict.kind === 'banned';
}

/** What a `429` carries beyond the rate-limit headers. */
export const REFUSAL_HEADERS: Readonly<Record<string, string>> = { 'cache-control': 'no-store', 'content-type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8` };

/** A refusal's metrics, and the log line of the one that starts a ban. */
export function noteRefusal(verdict: Refusal, { caller, policy }: Pick<Identity, 'caller' | 'policy'>, log: { warn(fields: object, message: string): void }, metrics: Metrics): void {
  if (verdict.kind === 'rate-limited' && verdict.banStarted) {
    const { until, durationMs } = verdict.banStarted;
    log.warn({ caller, plan: policy.name, bannedUntil: new Date(until).toISOString(), banSeconds: durationMs / 1000 }, 'caller banned');
    metrics.bans.inc({ plan: policy.name });
  }
  metrics.refusals.inc({ kind: verdict.kind, plan: policy.name });
}

/** The problem body of a refusal of a request for `url`. The problem's fixed members are serialised once. */
export function refusalBody(publicUrl: string) {
  // `{"type":…,"title":…,"status":429`: what every refusal of a kind starts with.
  const head = ({ slug }: ProblemError) => {
    const { detail: _, instance: __, ...fixed } = problemBody(publicUrl, slug, '', '');
    return JSON.stringify(fixed).slice(0, -1);
  };
  const heads = { 'rate-limited': head(new ProblemError('rate-limited', '')), banned: head(new ProblemError('key-banned', '')) };
  return (verdict: Refusal, url: string): string => {
    const instance = JSON.stringify(url.split('?')[0]);
    let members: string;
    if (verdict.kind === 'rate-limited') {
      const { window, limit, plan, retryAfterSeconds } = verdict;
      const detail = `The ${plan} plan allows ${limit} requests per ${window}. Retry after ${retryAfterSeconds} seconds.`;
      members = `"detail":"${detail}","instance":${instance},"window":"${window}","limit":${limit},"plan":"${plan}","retryAfter":${retryAfterSeconds}`;
    } else {
      const until = new Date(verdict.bannedUntil).toISOString();
      const detail = `Banned until ${until} for sending requests after being rate limited. Requests during the ban do not extend it.`;
      members = `"detail":"${detail}","instance":${instance},"retryAfter":${verdict.retryAfterSeconds},"bannedUntil":"${until}"`;
    }
    return `${heads[verdict.kind]},${members}}`;
  };
}
