import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { postgresAvailable, type TestDatabase, testDatabase } from '../helpers/database.js';
import { type Server, startServer } from '../helpers/process.js';
import { redisForTests } from '../helpers/redis.js';

// Two fresh instances on PostgreSQL and Redis, hit by bursts far larger than their event loops can
// absorb at once: the limit stays exact, and a busy loop is not taken for a Redis outage.
const redis = await redisForTests();
const available = (await postgresAvailable()) && redis !== null;
const BURSTS = 5;
const BURST = 3_000;

describe.skipIf(!available)('bursts at two instances sharing PostgreSQL and Redis', () => {
  let store: TestDatabase;
  let keys: KeysRepository;
  let servers: Server[];

  beforeAll(async () => {
    store = await testDatabase({ kind: 'postgres' });
    keys = new KeysRepository(store.db, systemClock);
    // 500 sockets per instance from one address stand for a crowd of clients: above the default allowance per address.
    const env = {
      DATABASE_URL: store.url,
      REDIS_URL: redis!.url,
      REDIS_KEY_PREFIX: `petstore-test-${randomBytes(4).toString('hex')}:`,
      MAX_CONNECTIONS_PER_ADDRESS: '1000',
    };
    servers = await Promise.all([startServer(env), startServer(env)]);
  });
  afterAll(async () => {
    await Promise.all((servers ?? []).map((server) => server.stop()));
    await store?.db.destroy();
    await store?.drop();
  });

  it(`${BURSTS} bursts of ${BURST} concurrent requests, one new free key each, admit exactly 60 every time, from the first moment`, async () => {
    const agents = servers.map(() => new Agent({ keepAlive: true, maxSockets: 500 }));
    const outcomes: Record<number, number>[] = [];
    try {
      for (let burst = 0; burst < BURSTS; burst++) {
        const { key } = await keys.create({ plan: 'free' });
        const statuses = await Promise.all(
          Array.from({ length: BURST }, (_, i) => get(servers[i % 2]!.url, key, agents[i % 2]!)),
        );
        const counted: Record<number, number> = {};
        for (const status of statuses) counted[status] = (counted[status] ?? 0) + 1;
        outcomes.push(counted);
      }
    } finally {
      for (const agent of agents) agent.destroy();
    }
    console.info('statuses per burst:', outcomes);
    for (const counted of outcomes) expect(counted).toEqual({ 200: 60, 429: BURST - 60 });
    for (const server of servers) {
      const metrics = await (await fetch(`${server.adminUrl}/metrics`)).text();
      expect(metrics).toContain('petstore_ratelimit_deciding_store{store="memory"} 0');
      expect(server.output()).not.toContain('Redis is unavailable');
    }
  });
});

function get(base: string, key: string, agent: Agent): Promise<number> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: '/pets/1', headers: { 'x-api-key': key }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}
