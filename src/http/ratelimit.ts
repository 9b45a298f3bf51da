import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyRecord } from '../keys/repository.js';
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
  const unbans = new UnbanSignals(limiter);
  return async function limit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { caller, policy } = request.identity;
    if (request.identity.kind === 'key') await unbans.apply(request.identity.key, caller);
    const verdict = countsTowardLimit(request.url) ? await limiter.hit(caller, policy) : await limiter.peek(caller, policy);
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

/**
 * An unban is written to the key's row (by the admin API or the CLI, in any process); each instance
 * applies it to the limiter the first time it sees the row's counter move. A counter seen for the
 * first time is taken as applied: this instance's memory holds no ban older than itself.
 */
class UnbanSignals {
  readonly #seen = new Map<string, number>();

  constructor(private readonly limiter: LimiterStore) {}

  async apply(key: KeyRecord, caller: string): Promise<void> {
    const seen = this.#seen.get(key.id);
    if (seen === key.unbanSeq) return;
    this.#seen.set(key.id, key.unbanSeq);
    if (seen !== undefined) await this.limiter.unban(caller);
  }
}
