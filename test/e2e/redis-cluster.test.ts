/**
 * The service on a real Redis Cluster (three primaries, three replicas; scripts/redis-cluster.ts),
 * configured with REDIS_CLUSTER_NODES: limits stay exact across two instances whichever shard holds
 * the caller, and the loss of the primary that holds a caller's slot fails no request.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisCluster, startRedisCluster } from '../../scripts/redis-cluster.js';
import { systemClock } from '../../src/clock.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { keyCaller } from '../../src/ratelimit/callers.js';
import { COMMAND_TIMEOUT_MS } from '../../src/ratelimit/failover-store.js';
import { limiterKeys } from '../../src/ratelimit/redis-store.js';
import { postgresAvailable, type TestDatabase, testDatabase } from '../helpers/database.js';
import { type Server, startServer } from '../helpers/process.js';
import { freeClusterPorts, redisClusterInstalled } from '../helpers/redis.js';

const available = redisClusterInstalled() && (await postgresAvailable());
const CONCURRENT = 1_000;

const PREFIX = `petstore-test-${randomBytes(4).toString('hex')}:`;
/** A Redis key of a key's limiter state: all of them share its slot (the caller id is their hash tag). */
const stateOf = (keyId: string) => limiterKeys(PREFIX, keyCaller(keyId))[2];

describe.skipIf(!available)('the service on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let store: TestDatabase;
  let keys: KeysRepository;

  beforeAll(async () => {
    cluster = await startRedisCluster(await freeClusterPorts());
    store = await testDatabase({ kind: 'postgres' });
    keys = new KeysRepository(store.db, systemClock);
  }, 60_000);
  afterAll(async () => {
    await store?.db.destroy();
    await store?.drop();
    await cluster?.stop();
  });

  const env = () => ({
    DATABASE_URL: store.url,
    REDIS_CLUSTER_NODES: cluster.nodesVariable,
    REDIS_KEY_PREFIX: PREFIX,
    MAX_CONNECTIONS_PER_ADDRESS: '1000',
    LOG_LEVEL: 'info',
  });

  /** A new key of `plan` whose state lives on a primary not in `taken`. */
  async function keyOnNewShard(plan: 'free' | 'enterprise', taken: Set<number>) {
    for (;;) {
      const created = await keys.create(plan === 'free' ? { plan } : { plan, perMinute: 1_000_000, perDay: 1_000_000 });
      const primary = await cluster.primaryOf(stateOf(created.record.id));
      if (!taken.has(primary)) return { key: created.key, id: created.record.id, primary };
    }
  }

  it(`two instances: ${CONCURRENT} concurrent requests with one free key admit exactly 60, on each of the three shards`, async () => {
    const servers = await Promise.all([startServer(env()), startServer(env())]);
    const agents = servers.map(() => new Agent({ keepAlive: true, maxSockets: 250 }));
    const shards = new Set<number>();
    try {
      for (const server of servers)
        expect(await readyz(server)).toMatchObject({ limiter: { configured: 'redis', deciding: 'redis' } });
      for (let round = 0; round < 3; round++) {
        const { key, primary } = await keyOnNewShard('free', shards);
        shards.add(primary);
        const statuses = await Promise.all(
          Array.from({ length: CONCURRENT }, (_, i) => get(servers[i % 2]!.url, key, agents[i % 2]!)),
        );
        const counted: Record<number, number> = {};
        for (const { status } of statuses) counted[status] = (counted[status] ?? 0) + 1;
        expect(counted, `round ${round + 1}, primary ${primary}`).toEqual({ 200: 60, 429: CONCURRENT - 60 });
      }
      expect(shards.size).toBe(3);
      for (const server of servers) expect(server.output()).not.toContain('Redis is unavailable');
    } finally {
      for (const agent of agents) agent.destroy();
      await Promise.all(servers.map((server) => server.stop()));
    }
  }, 120_000);

  it("losing the primary of a caller's slot while traffic flows: no request fails or waits past the bound, memory decides meanwhile (said once), and the instance returns to the cluster by itself", async () => {
    const server = await startServer(env());
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const { key, id, primary } = await keyOnNewShard('enterprise', new Set());
      expect(await readyz(server)).toMatchObject({ limiter: { deciding: 'redis' } });
      const answers: { status: number; ms: number }[] = [];
      let flowing = true;
      const traffic = Promise.all(
        Array.from({ length: 8 }, async () => {
          while (flowing) answers.push(await get(server.url, key, agent));
        }),
      );
      await sleep(500);
      const before = answers.length;
      await cluster.nodes.find((node) => node.port === primary)!.kill();
      // Memory decides until a replica is promoted (the cluster's node timeout, 1 s, and an election).
      await eventually(
        async () => (await readyz(server)).limiter.deciding === 'memory',
        'the instance decides in memory',
      );
      expect(await gauge(server, 'memory')).toBe(1);
      // The cluster's election and the instance's return take seconds alone, more with the whole suite on both cores.
      await eventually(
        async () => (await readyz(server)).limiter.deciding === 'redis',
        'the instance is back on the cluster',
        60_000,
      );
      expect(await gauge(server, 'redis')).toBe(1);
      // The node asked may learn of the promotion a moment after the instance did.
      await eventually(
        async () => (await cluster.primaryOf(stateOf(id)).catch(() => primary)) !== primary,
        'a replica serves the slot',
        60_000,
      );
      const back = answers.length;
      await sleep(500);
      flowing = false;
      await traffic;

      expect(answers.length).toBeGreaterThan(back);
      expect(before).toBeGreaterThan(0);
      expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200]));
      // The bound docs/scaling.md documents: a request waits on Redis at most COMMAND_TIMEOUT_MS (then memory
      // decides); allow the loop's own delays on this shared machine, far below what a hang would take.
      const slowest = Math.max(...answers.map((a) => a.ms));
      console.info(`${answers.length} requests through the failover, slowest ${slowest.toFixed(1)} ms`);
      expect(slowest).toBeLessThan(COMMAND_TIMEOUT_MS * 10);
      const said = (text: string) =>
        server
          .output()
          .split('\n')
          .filter((line) => line.includes(text)).length;
      expect(said('Redis is unavailable')).toBe(1);
      expect(said('Redis is available')).toBe(1);
      // And it decides on the cluster again: the key's count is shared there, not in memory.
      const status = await readyz(server);
      expect(status).toMatchObject({ status: 'ready', limiter: { configured: 'redis', deciding: 'redis' } });
    } finally {
      agent.destroy();
      await server.stop();
    }
  }, 90_000);
});

async function readyz(server: Server): Promise<{ status: string; limiter: { configured: string; deciding: string } }> {
  return (await (await fetch(`${server.adminUrl}/readyz`)).json()) as never;
}

async function gauge(server: Server, store: string): Promise<number> {
  const text = await (await fetch(`${server.adminUrl}/metrics`)).text();
  return Number(new RegExp(`petstore_ratelimit_deciding_store\\{store="${store}"\\} (\\d)`).exec(text)?.[1]);
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function get(base: string, key: string, agent: Agent): Promise<{ status: number; ms: number }> {
  const { hostname, port } = new URL(base);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: '/pets/1', headers: { 'x-api-key': key }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}
