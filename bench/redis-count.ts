/**
 * Redis round trips per request, without MONITOR: the calls of EVALSHA and EVAL (the only commands
 * the limiter sends; the commands its script runs inside Redis are no round trips) against the
 * requests the service answered, from its own `/metrics`; for a peer, which has no metrics, against
 * the requests sent to it (one at a time, each answered). Other clients of the same Redis that run
 * scripts meanwhile would inflate the figure, never deflate it. On a cluster, every node is asked and
 * the calls are summed.
 */
import { Redis } from 'ioredis';

export interface RedisSample {
  scripts: number;
  /** Microseconds Redis spent running them (`usec` of the same `INFO commandstats` lines). */
  scriptUsec: number;
  /** Every command Redis processed, whoever sent it: an upper bound. */
  commands: number;
  requests: number;
}

export type RedisCounter = Awaited<ReturnType<typeof redisCounter>>;

/** One Redis (`redis://…`), or every node of a cluster. */
export async function redisCounter(urls: string[]) {
  const nodes = urls.map((url) => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 }));
  await Promise.all(nodes.map((node) => node.connect()));
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  return {
    /** Without `adminUrl` (a peer), `requests` is 0: count the requests sent instead. */
    async sample(adminUrl: string | undefined): Promise<RedisSample> {
      const [infos, metrics] = await Promise.all([
        Promise.all(nodes.map(async (node) => [await node.info('stats'), await node.info('commandstats')] as const)),
        adminUrl ? fetch(`${adminUrl}/metrics`).then((r) => r.text()) : '',
      ]);
      const stat = (commandStats: string, command: string, field: 'calls' | 'usec') =>
        Number(new RegExp(`cmdstat_${command}:(?:[a-z_]+=[^,]*,)*?${field}=(\\d+)`).exec(commandStats)?.[1] ?? 0);
      const scripts = (field: 'calls' | 'usec') =>
        sum(infos.map(([, commandStats]) => stat(commandStats, 'evalsha', field) + stat(commandStats, 'eval', field)));
      return {
        scripts: scripts('calls'),
        scriptUsec: scripts('usec'),
        commands: sum(infos.map(([stats]) => Number(/total_commands_processed:(\d+)/.exec(stats)?.[1] ?? 0))),
        requests: requestsAnswered(metrics),
      };
    },
    perRequest(before: RedisSample, after: RedisSample, sent?: number): number {
      return (after.scripts - before.scripts) / Math.max(1, sent ?? after.requests - before.requests);
    },
    /** What one script run cost Redis between two samples, in µs (issue 32: the service's script beside the peer's). */
    usPerScript(before: RedisSample, after: RedisSample): number {
      return (after.scriptUsec - before.scriptUsec) / Math.max(1, after.scripts - before.scripts);
    },
    close: () => Promise.all(nodes.map((node) => node.quit())).then(() => undefined),
  };
}

/** The sum of `petstore_http_requests_total` over its labels. */
function requestsAnswered(metrics: string): number {
  let total = 0;
  for (const match of metrics.matchAll(/^petstore_http_requests_total\{[^}]*\} (\d+)$/gm)) total += Number(match[1]);
  return total;
}
