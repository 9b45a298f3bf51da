import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoKey, freePort, type Server, startServer, tempDir } from '../helpers/process.js';
import { type RedisServer, redisServerInstalled, startRedisServer } from '../helpers/redis.js';

/** Polls `check` (bounded): the service notices Redis coming and going by itself. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(!redisServerInstalled())('the service through a Redis outage', () => {
  let redisPort: number;
  let redis: RedisServer;
  let server: Server;
  let key: string;

  beforeAll(async () => {
    redisPort = await freePort();
    redis = await startRedisServer(redisPort);
    server = await startServer({ DATABASE_URL: join(tempDir(), 'p.db'), REDIS_URL: redis.url, LOG_LEVEL: 'info' });
    key = demoKey(server, 'free');
  });
  afterAll(async () => {
    await server?.stop();
    await redis?.kill();
  });

  const readyz = async () =>
    (await (await fetch(`${server.adminUrl}/readyz`)).json()) as { status: string; limiter: { deciding: string } };
  const gauge = async (store: string) =>
    Number(
      new RegExp(`petstore_ratelimit_deciding_store\\{store="${store}"\\} (\\d)`).exec(
        await (await fetch(`${server.adminUrl}/metrics`)).text(),
      )?.[1],
    );
  const switches = (text: string) =>
    server
      .output()
      .split('\n')
      .filter((line) => line.includes(text)).length;

  it('keeps answering from memory while Redis is down, says so, and returns to Redis by itself', async () => {
    expect((await readyz()).limiter.deciding).toBe('redis');
    expect(await gauge('redis')).toBe(1);
    for (let i = 0; i < 5; i++)
      expect((await fetch(`${server.url}/pets`, { headers: { 'x-api-key': key } })).status).toBe(200);

    await redis.kill();
    const started = Date.now();
    const during = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${server.url}/pets`, { headers: { 'x-api-key': key } })),
    );
    expect(during.map((r) => r.status)).toEqual(Array(20).fill(200));
    // Not a timing assertion of the service's speed: a bound that only a hang would break.
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const response of during) expect(response.headers.get('x-ratelimit-limit')).toBe('60');
    const ready = await readyz();
    expect(ready).toMatchObject({ status: 'ready', limiter: { configured: 'redis', deciding: 'memory' } });
    expect(await gauge('memory')).toBe(1);
    expect(await gauge('redis')).toBe(0);

    redis = await startRedisServer(redisPort);
    await eventually(async () => (await readyz()).limiter.deciding === 'redis', 'the service decides in Redis again');
    expect(await gauge('redis')).toBe(1);
    const back = await fetch(`${server.url}/pets`, { headers: { 'x-api-key': key } });
    expect(back.status).toBe(200);
    // The new Redis knows only what it decided itself: nothing was replayed into it.
    expect(back.headers.get('ratelimit')).toMatch(/^"minute";r=59;t=60, "day";r=999;t=\d+$/);

    expect(switches('rate limits are decided in memory')).toBe(1);
    expect(switches('rate limits are decided in Redis')).toBe(1);
  });
});
