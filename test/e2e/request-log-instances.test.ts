import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { postgresAvailable } from '../helpers/database.js';
import type { Server } from '../helpers/process.js';
import { redisForTests } from '../helpers/redis.js';
import { type ScaledOut, scaledOut } from '../helpers/scaled-out.js';

/**
 * A test key's request log across two instances on PostgreSQL + Redis (docs/request-log.md): an exchange answered by
 * one is read through the other within a second, with the checks the card gave it, whichever instance graded it.
 */

const redis = await redisForTests();
const available = (await postgresAvailable()) && redis !== null;

describe.skipIf(!available)('the request log, scaled out', () => {
  let two: ScaledOut;
  let a: Server;
  let b: Server;
  beforeAll(async () => {
    two = await scaledOut(redis!.url);
    ({ a, b } = two);
  });
  afterAll(async () => two?.stop());

  const entry = (server: Server, key: string, requestId: string) =>
    fetch(`${server.url}/request-log/${requestId}`, { headers: { 'x-api-key': key } });

  it('answers through one instance what another answered, within a second, with its checks', async () => {
    const { key } = await two.newKey({ plan: 'pro', test: true });
    const sent = await fetch(`${a.url}/pets/1`, { headers: { 'x-api-key': key, 'x-request-id': 'through-a' } });
    expect(sent.status).toBe(200);
    const started = performance.now();
    let found = await entry(b, key, 'through-a');
    while (found.status === 404) {
      expect(performance.now() - started).toBeLessThan(1_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
      found = await entry(b, key, 'through-a');
    }
    expect(found.status).toBe(200);
    expect(await found.json()).toMatchObject({
      requestId: 'through-a',
      status: 200,
      checks: [{ id: 'pins-version', outcome: 'failed', detail: 'GET /pets/1 carried no Petstore-Version' }],
    });
  });

  it('keeps each request’s checks when requests of one key race through both instances', async () => {
    const { key } = await two.newKey({ plan: 'pro', test: true });
    const ids = Array.from({ length: 40 }, (_, i) => `race-${i}`);
    await Promise.all(
      ids.map((id, i) =>
        fetch(`${(i % 2 ? a : b).url}/pets/1`, {
          headers: {
            'x-api-key': key,
            'x-request-id': id,
            ...(i % 4 === 0 ? {} : { 'petstore-version': NEWEST_VERSION }),
          },
        }),
      ),
    );
    // Read through A: its own entries at once, B's within a second.
    const started = performance.now();
    let entries: { requestId: string; checks: { id: string; outcome: string }[] }[] = [];
    while (entries.length < ids.length) {
      expect(performance.now() - started).toBeLessThan(1_000);
      const page = await fetch(`${a.url}/request-log?limit=100`, { headers: { 'x-api-key': key } });
      entries = ((await page.json()) as { data: typeof entries }).data;
      if (entries.length < ids.length) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const logged of entries) {
      const unpinned = Number(logged.requestId.slice('race-'.length)) % 4 === 0;
      expect(logged.checks, logged.requestId).toContainEqual(
        expect.objectContaining({ id: 'pins-version', outcome: unpinned ? 'failed' : 'passed' }),
      );
    }
  });
});
