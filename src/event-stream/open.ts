import type { Clock } from '../clock.js';
import { connected, createLimiterRedis } from '../ratelimit/failover-store.js';
import { type LimiterConfig, REDIS_START_WAIT_MS } from '../ratelimit/open.js';
import { MemorySeats, RedisSeats, type StreamSeats } from './seats.js';

/**
 * Where each key's open streams are counted: in this process's memory on the embedded default, in Redis (its own
 * connection) where instances share the limits, so that a key's allowance holds across all of them.
 */
export async function openSeats(
  config: Pick<LimiterConfig, 'redis' | 'redisKeyPrefix'>,
  clock: Clock,
): Promise<StreamSeats> {
  if (!config.redis) return new MemorySeats();
  const redis = createLimiterRedis(config.redis);
  await Promise.race([
    connected(redis).catch(() => {}),
    new Promise((resolve) => setTimeout(resolve, REDIS_START_WAIT_MS).unref()),
  ]);
  return new RedisSeats(redis, config.redisKeyPrefix, clock);
}
