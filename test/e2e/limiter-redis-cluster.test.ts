/**
 * The limiter on a real Redis Cluster (three primaries, three replicas; scripts/redis-cluster.ts),
 * through the client the service opens for REDIS_CLUSTER_NODES: the shared vectors, unchanged.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RedisCluster, startRedisCluster } from '../../scripts/redis-cluster.js';
import { loadConfig } from '../../src/config.js';
import { connected, createLimiterRedis, type RedisConfig } from '../../src/ratelimit/failover-store.js';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import { MAX_CALLS_PER_RUN, RedisLimiterStore } from '../../src/ratelimit/redis-store.js';
import { freeClusterPorts, redisClusterInstalled, unstamped } from '../helpers/redis.js';
import { runVectors } from '../ratelimit/vectors.js';

const NOON = Date.parse('2024-03-01T12:00:00.000Z');

describe.skipIf(!redisClusterInstalled())('the Redis store on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let config: RedisConfig;
  beforeAll(async () => {
    cluster = await startRedisCluster(await freeClusterPorts());
    config = loadConfig({ REDIS_CLUSTER_NODES: cluster.nodesVariable }).redis!;
  }, 60_000);
  afterAll(async () => cluster?.stop());

  it('queues nothing: a command to a cluster that is not ready fails at once, and the client keeps trying to connect', async () => {
    // A port nothing listens on: the cluster never becomes ready.
    const client = createLimiterRedis({
      kind: 'cluster',
      nodes: [{ host: '127.0.0.1', port: cluster.nodes[0]!.port + 6 }],
    });
    client.on('error', () => {});
    try {
      await expect(client.ping()).rejects.toThrow(/isn't ready and enableOfflineQueue options is false/);
      expect(client.status).not.toBe('end');
    } finally {
      client.disconnect();
    }
  });

  const prefix = `petstore-test-${randomBytes(4).toString('hex')}:`;

  it("decides one turn's calls of many callers, a run per caller's calls, each exactly as if alone", async () => {
    const client = createLimiterRedis(config) as Cluster;
    // A connection to each primary first: without a queue, a node's first commands fail while it opens.
    await connected(client);
    const runs = vi.spyOn(client, 'evalsha');
    const policy: Policy = { name: 'free', perMinute: 20, perDay: 100 };
    const redisStore = new RedisLimiterStore(client, { clock: () => NOON, prefix });
    const memory = new MemoryLimiterStore({ clock: () => NOON });
    // Twelve callers, spread over the shards by their slots; 25 calls each, interleaved, in one turn.
    const callers = Array.from({ length: 12 }, () => randomBytes(8).toString('hex'));
    const calls = Array.from({ length: 300 }, (_, i) => callers[i % callers.length]!);
    try {
      const fromRedis = await Promise.all(calls.map((caller) => redisStore.hit(caller, policy)));
      const alone = [];
      for (const caller of calls) alone.push(await memory.hit(caller, policy));
      expect(fromRedis.map(unstamped)).toEqual(alone);
      // Each caller's 25 calls in runs of their own.
      expect(runs).toHaveBeenCalledTimes(callers.length * Math.ceil(25 / MAX_CALLS_PER_RUN));
    } finally {
      await Promise.all([redisStore.close(), memory.close()]);
    }
  });
  // The service waits for the cluster to be ready before it decides there (ratelimit/open.ts); so does each case.
  runVectors(async (clock, rules) => {
    const client = createLimiterRedis(config);
    await once(client, 'ready');
    return new RedisLimiterStore(client, { clock, rules, prefix });
  });
});
