import type { Clock } from '../clock.js';
import { BanShortcut } from './ban-shortcut.js';
import type { BanRules } from './decision.js';
import {
  connected,
  createLimiterRedis,
  FailoverLimiterStore,
  type FailoverLog,
  type RedisConfig,
} from './failover-store.js';
import { MemoryLimiterStore } from './memory-store.js';
import type { LimiterStore } from './store.js';

/** Where rate-limit decisions are made right now: shared Redis, or this process's memory. */
export type LimiterStatus =
  { configured: 'memory'; deciding: 'memory' } | { configured: 'redis'; deciding: 'redis' | 'memory' };

export interface Limiter {
  store: LimiterStore;
  status(): LimiterStatus;
}

/** What the limiter is opened with (config.ts gives it). */
export interface LimiterConfig {
  /** Null: no Redis, the limits are decided in this process's memory. */
  redis: RedisConfig | null;
  /** Starts every limiter key in Redis, so that several services can share one Redis. */
  redisKeyPrefix: string;
  ban: BanRules;
}

/** How long start-up waits for Redis before it starts limiting in memory (and switches when Redis comes). */
export const REDIS_START_WAIT_MS = 3_000;

/**
 * The limiter the configuration asks for: in memory without REDIS_URL or REDIS_CLUSTER_NODES; with
 * either, Redis (one server, or a cluster) with a memory fallback for outages. `onChange` hears every
 * switch, for metrics. In memory, `clock` tells the time; Redis decides on its own `TIME`. Start-up
 * waits for Redis to be `connected` at most REDIS_START_WAIT_MS, and no longer than its first
 * connection error: the limiter then starts in memory and switches when Redis comes.
 */
export async function openLimiter(
  config: LimiterConfig,
  clock: Clock,
  log: FailoverLog,
  onChange: (status: LimiterStatus) => void,
): Promise<Limiter> {
  if (!config.redis) {
    const status: LimiterStatus = { configured: 'memory', deciding: 'memory' };
    onChange(status);
    return { store: new MemoryLimiterStore({ clock, rules: config.ban }), status: () => status };
  }
  const redis = createLimiterRedis(config.redis);
  await Promise.race([
    connected(redis).catch(() => {}),
    new Promise((resolve) => setTimeout(resolve, REDIS_START_WAIT_MS).unref()),
  ]);
  const status = (): LimiterStatus => ({ configured: 'redis', deciding: failover.mode });
  const failover = new FailoverLimiterStore(redis, {
    clock,
    log,
    rules: config.ban,
    prefix: config.redisKeyPrefix,
    onModeChange: () => onChange(status()),
  });
  // A banned caller costs no round trip until its ban ends.
  const store = new BanShortcut(failover, { clock });
  if (failover.mode === 'memory')
    log.warn({ limiter: 'memory' }, 'Redis does not answer yet: rate limits are decided in memory until it does');
  onChange(status());
  return { store, status };
}
