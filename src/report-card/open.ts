import type { Clock } from '../clock.js';
import { connected, createLimiterRedis } from '../ratelimit/failover-store.js';
import { type LimiterConfig, REDIS_START_WAIT_MS } from '../ratelimit/open.js';
import { type Cards, MemoryCards } from './cards.js';
import { RedisCards } from './redis-cards.js';

/** How often a failing Redis is said, at most: once, then once a minute. */
const WARN_EVERY_MS = 60_000;

/**
 * The report cards where the limits are: in this process's memory on the embedded default, in Redis
 * (its own connection, awaited at start as the limiter's is) where instances share the limits, so that
 * they grade a key as one would.
 */
export async function openCards(
  config: Pick<LimiterConfig, 'redis' | 'redisKeyPrefix'>,
  clock: Clock,
  log: { warn(fields: object, message: string): void },
): Promise<Cards> {
  if (!config.redis) return new MemoryCards();
  let warnedAt = -Infinity;
  const warn = (fields: object, message: string) => {
    const now = clock();
    if (now - warnedAt < WARN_EVERY_MS) return;
    warnedAt = now;
    log.warn(fields, message);
  };
  const redis = createLimiterRedis(config.redis);
  await Promise.race([
    connected(redis).catch(() => {}),
    new Promise((resolve) => setTimeout(resolve, REDIS_START_WAIT_MS).unref()),
  ]);
  return new RedisCards(redis, { prefix: config.redisKeyPrefix, warn });
}
