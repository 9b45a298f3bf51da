import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { createLimiterRedis } from '../ratelimit/failover-store.js';
import { type Cards, MemoryCards } from './cards.js';
import { RedisCards } from './redis-cards.js';

/** How often a failing Redis is said, at most: once, then once a minute. */
const WARN_EVERY_MS = 60_000;

/**
 * The report cards where the limits are: in this process's memory on the embedded default, in Redis
 * (its own connection) where instances share the limits, so that they grade a key as one would.
 */
export function openCards(config: Pick<Config, 'redis' | 'redisKeyPrefix'>, clock: Clock, log: { warn(fields: object, message: string): void }): Cards {
  if (!config.redis) return new MemoryCards();
  let warnedAt = -Infinity;
  const warn = (fields: object, message: string) => {
    const now = clock();
    if (now - warnedAt < WARN_EVERY_MS) return;
    warnedAt = now;
    log.warn(fields, message);
  };
  return new RedisCards(createLimiterRedis(config.redis), { prefix: config.redisKeyPrefix, warn });
}
