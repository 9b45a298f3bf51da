import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../ops/metrics.js';
import { rateLimitHeaders } from '../ratelimit/headers.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { Verdict } from '../ratelimit/verdict.js';
import { ProblemError } from './problems.js';

/** The docs, the document and the problem pages count nothing, but still carry the headers. */
const UNCOUNTED = /^\/(docs(\/|$|\?)|openapi\.(json|yaml)($|\?)|problems\/)/;

export function countsTowardLimit(url: string): boolean {
  return !UNCOUNTED.test(url);
}

/**
 * The limit step, after `identify` and before the handler: every response gets the rate-limit
 * headers, and a refused request ends here with a `429`.
 */
export function rateLimitHook(limiter: LimiterStore, metrics: Metrics) {
  return async function limit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { caller, policy } = request.identity;
    // An unban made anywhere (admin API, CLI, another instance) travels on the key's row.
    const unbanSeq = request.identity.kind === 'key' ? request.identity.key.unbanSeq : 0;
    const verdict = countsTowardLimit(request.url) ? await limiter.hit(caller, policy, unbanSeq) : await limiter.peek(caller, policy, unbanSeq);
    reply.headers(rateLimitHeaders(verdict));
    const refusal = refusalOf(verdict);
    if (!refusal) return;
    if (verdict.kind === 'rate-limited' && verdict.banStarted) {
      const { until, durationMs } = verdict.banStarted;
      request.log.warn({ caller, plan: policy.name, bannedUntil: new Date(until).toISOString(), banSeconds: durationMs / 1000 }, 'caller banned');
      metrics.bans.inc({ plan: policy.name });
    }
    metrics.refusals.inc({ kind: verdict.kind, plan: policy.name });
    throw refusal;
  };
}

function refusalOf(verdict: Verdict): ProblemError | null {
  const noStore = { 'cache-control': 'no-store' };
  if (verdict.kind === 'rate-limited') {
    const { window, limit, plan, retryAfterSeconds } = verdict;
    return new ProblemError(
      'rate-limited',
      `The ${plan} plan allows ${limit} requests per ${window}. Retry after ${retryAfterSeconds} seconds.`,
      { window, limit, plan, retryAfter: retryAfterSeconds },
      noStore,
    );
  }
  if (verdict.kind === 'banned') {
    const until = new Date(verdict.bannedUntil).toISOString();
    return new ProblemError(
      'key-banned',
      `Banned until ${until} for sending requests after being rate limited. Requests during the ban do not extend it.`,
      { retryAfter: verdict.retryAfterSeconds, bannedUntil: until },
      noStore,
    );
  }
  return null;
}
