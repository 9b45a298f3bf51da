import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from '../ops/metrics.js';
import { rateLimitHeaders } from '../ratelimit/headers.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { Verdict } from '../ratelimit/verdict.js';
import { PROBLEM_CONTENT_TYPE, problemBody, ProblemError } from './problems.js';

/** The docs, the document and the problem pages count nothing, but still carry the headers. */
const UNCOUNTED = /^\/(docs(\/|$|\?)|openapi\.(json|yaml)($|\?)|problems\/)/;

export function countsTowardLimit(url: string): boolean {
  return !UNCOUNTED.test(url);
}

/**
 * The limit step, after `identify` and before the handler: every response gets the rate-limit
 * headers, and a refused request ends here with a `429`, answered on the spot: the cheapest path of
 * all (no exception, no error handler, the invariant parts of the body built once).
 */
export function rateLimitHook(limiter: LimiterStore, metrics: Metrics, publicUrl: string) {
  const refuse = refusal(publicUrl);
  return async function limit(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const { caller, policy } = request.identity;
    // An unban made anywhere (admin API, CLI, another instance) travels on the key's row.
    const unbanSeq = request.identity.kind === 'key' ? request.identity.key.unbanSeq : 0;
    const verdict = countsTowardLimit(request.url) ? await limiter.hit(caller, policy, unbanSeq) : await limiter.peek(caller, policy, unbanSeq);
    reply.headers(rateLimitHeaders(verdict));
    if (verdict.kind !== 'rate-limited' && verdict.kind !== 'banned') return undefined;
    if (verdict.kind === 'rate-limited' && verdict.banStarted) {
      const { until, durationMs } = verdict.banStarted;
      request.log.warn({ caller, plan: policy.name, bannedUntil: new Date(until).toISOString(), banSeconds: durationMs / 1000 }, 'caller banned');
      metrics.bans.inc({ plan: policy.name });
    }
    metrics.refusals.inc({ kind: verdict.kind, plan: policy.name });
    return refuse(reply, verdict);
  };
}

type Refusal = Extract<Verdict, { kind: 'rate-limited' | 'banned' }>;

/** Sends the `429` of a refusal. The problem's fixed members are serialised once. */
function refusal(publicUrl: string) {
  // `{"type":…,"title":…,"status":429`: what every refusal of a kind starts with.
  const head = ({ slug }: ProblemError) => {
    const { detail: _, instance: __, ...fixed } = problemBody(publicUrl, slug, '', '');
    return JSON.stringify(fixed).slice(0, -1);
  };
  const heads = { 'rate-limited': head(new ProblemError('rate-limited', '')), banned: head(new ProblemError('key-banned', '')) };
  return (reply: FastifyReply, verdict: Refusal): FastifyReply => {
    const instance = JSON.stringify(reply.request.url.split('?')[0]);
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
    return reply
      .code(429)
      .header('cache-control', 'no-store')
      .type(PROBLEM_CONTENT_TYPE)
      .send(`${heads[verdict.kind]},${members}}`);
  };
}
