/**
 * The limiter on a real Redis Cluster (three primaries, three replicas; scripts/redis-cluster.ts),
 * through the client the service opens for REDIS_CLUSTER_NODES: the shared vectors, unchanged.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisCluster, startRedisCluster } from '../../scripts/redis-cluster.js';
import { loadConfig, type RedisConfig } from '../../src/config.js';
import { createLimiterRedis } from '../../src/ratelimit/failover-store.js';
import { RedisLimiterStore } from '../../src/ratelimit/redis-store.js';
import { freeClusterPorts, redisClusterInstalled } from '../helpers/redis.js';
import { runVectors } from './vectors.js';

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
    const client = createLimiterRedis({ kind: 'cluster', nodes: [{ host: '127.0.0.1', port: cluster.nodes[0]!.port + 6 }] });
    client.on('error', () => {});
    try {
      await expect(client.ping()).rejects.toThrow(/isn't ready and enableOfflineQueue options is false/);
      expect(client.status).not.toBe('end');
    } finally {
      client.disconnect();
    }
  });

  const prefix = `petstore-test-${randomBytes(4).toString('hex')}:`;
  // The service waits for the cluster to be ready before it decides there (ratelimit/open.ts); so does each case.
  runVectors(async (clock, rules) => {
    const client = createLimiterRedis(config);
    await once(client, 'ready');
    return new RedisLimiterStore(client, { clock, rules, prefix });
  });
});
