import { MAX_RETRY_AFTER_SECONDS } from './http/schemas.js';
import { type BanRules, DEFAULT_BAN_RULES } from './ratelimit/decision.js';
import type { RedisConfig } from './ratelimit/failover-store.js';
import { ConfigError, type Env, positiveIntOf } from './config-values.js';

/**
 * The limiter's settings (ratelimit/), read by ./config.ts: where its state is (REDIS_URL, REDIS_CLUSTER_NODES,
 * REDIS_KEY_PREFIX), and its bans (BAN_*).
 */

/**
 * A ban's `Retry-After` is its length: the longest ban may not exceed what the document declares a
 * `Retry-After` can say (a day), nor the first ban the longest.
 */
export function banRulesOf(env: Env): BanRules {
  const firstBanSeconds = positiveIntOf(env, 'BAN_FIRST_SECONDS', DEFAULT_BAN_RULES.firstBanMs / 1000);
  const maxBanSeconds = positiveIntOf(env, 'BAN_MAX_SECONDS', DEFAULT_BAN_RULES.maxBanMs / 1000);
  if (maxBanSeconds > MAX_RETRY_AFTER_SECONDS) {
    throw new ConfigError(
      'BAN_MAX_SECONDS',
      `at most ${MAX_RETRY_AFTER_SECONDS} (a day: the longest Retry-After the document declares), got ${maxBanSeconds}`,
    );
  }
  if (firstBanSeconds > maxBanSeconds)
    throw new ConfigError(
      'BAN_FIRST_SECONDS',
      `the first ban may not be longer than BAN_MAX_SECONDS (${maxBanSeconds})`,
    );
  return {
    rejections: positiveIntOf(env, 'BAN_AFTER_REJECTIONS', DEFAULT_BAN_RULES.rejections),
    withinMs: 1000 * positiveIntOf(env, 'BAN_WITHIN_SECONDS', DEFAULT_BAN_RULES.withinMs / 1000),
    firstBanMs: 1000 * firstBanSeconds,
    maxBanMs: 1000 * maxBanSeconds,
    escalationWindowMs: DEFAULT_BAN_RULES.escalationWindowMs,
  };
}

export function redisOf(env: Env): RedisConfig | null {
  const url = env.REDIS_URL || undefined;
  const nodes = env.REDIS_CLUSTER_NODES || undefined;
  if (url && nodes)
    throw new ConfigError(
      'REDIS_CLUSTER_NODES',
      'set either REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both',
    );
  if (nodes) return { kind: 'cluster', nodes: clusterNodesOf(nodes) };
  if (url === undefined) return null;
  if (!/^rediss?:\/\/./.test(url)) throw new ConfigError('REDIS_URL', 'expected redis://host:port or rediss://…');
  return { kind: 'single', url };
}

/** `host:port,host:port,…`: seed nodes of a Redis Cluster (any few of its nodes; the client learns the rest). */
function clusterNodesOf(raw: string): { host: string; port: number }[] {
  const expected = 'expected host:port,host:port,… (seed nodes of the cluster)';
  const nodes = raw.split(',').map((entry) => {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry.trim());
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65_535)
      throw new ConfigError('REDIS_CLUSTER_NODES', `${expected}; ${JSON.stringify(entry.slice(0, 100))} is not one`);
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
  if (nodes.length > 100) throw new ConfigError('REDIS_CLUSTER_NODES', `${expected}; at most 100 of them`);
  return nodes;
}

export function redisKeyPrefixOf(env: Env): string {
  const raw = env.REDIS_KEY_PREFIX ?? 'petstore:';
  // Braces would break the hash tag that keeps one caller's keys in one Cluster slot.
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(raw))
    throw new ConfigError('REDIS_KEY_PREFIX', 'expected 1 to 64 of A-Z a-z 0-9 : _ . -');
  return raw;
}
