/**
 * Redis round trips per request, without MONITOR: the calls of EVALSHA and EVAL (the only commands
 * the limiter sends; the commands its script runs inside Redis are no round trips) against the
 * requests the service answered, from its own `/metrics`; for a peer, which has no metrics, against
 * the requests sent to it (one at a time, each answered). Other clients of the same Redis that run
 * scripts meanwhile would inflate the figure, never deflate it.
 */
import { Redis } from 'ioredis';

export interface RedisSample {
  scripts: number;
  /** Every command Redis processed, whoever sent it: an upper bound. */
  commands: number;
  requests: number;
}

export type RedisCounter = Awaited<ReturnType<typeof redisCounter>>;

export async function redisCounter(url: string) {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  return {
    /** Without `adminUrl` (a peer), `requests` is 0: count the requests sent instead. */
    async sample(adminUrl: string | undefined): Promise<RedisSample> {
      const [stats, commandStats, metrics] = await Promise.all([
        redis.info('stats'),
        redis.info('commandstats'),
        adminUrl ? fetch(`${adminUrl}/metrics`).then((r) => r.text()) : '',
      ]);
      const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(commandStats)?.[1] ?? 0);
      return {
        scripts: calls('evalsha') + calls('eval'),
        commands: Number(/total_commands_processed:(\d+)/.exec(stats)?.[1] ?? 0),
        requests: requestsAnswered(metrics),
      };
    },
    perRequest(before: RedisSample, after: RedisSample, sent?: number): number {
      return (after.scripts - before.scripts) / Math.max(1, sent ?? after.requests - before.requests);
    },
    close: () => redis.quit().then(() => undefined),
  };
}

/** The sum of `petstore_http_requests_total` over its labels. */
function requestsAnswered(metrics: string): number {
  let total = 0;
  for (const match of metrics.matchAll(/^petstore_http_requests_total\{[^}]*\} (\d+)$/gm)) total += Number(match[1]);
  return total;
}
