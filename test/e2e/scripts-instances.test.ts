import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { postgresAvailable } from '../helpers/database.js';
import type { Server } from '../helpers/process.js';
import { redisForTests } from '../helpers/redis.js';
import { type ScaledOut, scaledOut } from '../helpers/scaled-out.js';

/**
 * A test key's script across two instances on PostgreSQL + Redis (docs/testing-clients.md#scenarios-a-test-can-count-on):
 * armed through one, its steps met through both in turns, each used exactly once and in order; many requests
 * at once, through both, use each step once.
 */

const redis = await redisForTests();
const available = (await postgresAvailable()) && redis !== null;

describe.skipIf(!available)('a test key script, scaled out', () => {
  let two: ScaledOut;
  let a: Server;
  let b: Server;
  beforeAll(async () => {
    two = await scaledOut(redis!.url);
    ({ a, b } = two);
  });
  afterAll(async () => two?.stop());
  const newKey = async () => (await two.newKey({ plan: 'pro', test: true })).key;
  const headers = (key: string, more: Record<string, string> = {}) => ({
    'x-api-key': key,
    'petstore-version': NEWEST_VERSION,
    ...more,
  });
  const arm = (server: Server, key: string, steps: object[]) =>
    fetch(`${server.url}/test-scenario`, {
      method: 'PUT',
      headers: headers(key, { 'content-type': 'application/json' }),
      body: JSON.stringify({ steps }),
    });
  const script = async (server: Server, key: string) =>
    (await (await fetch(`${server.url}/test-scenario`, { headers: headers(key) })).json()) as {
      next: number;
      used: { step: number; requestId: string }[];
      done: boolean;
    };

  it('meets the steps through both instances in turns: each used exactly once, in order', async () => {
    const key = await newKey();
    const steps = ['503', '500', '429', '503', 'pass', '500'].map((answer) => ({ match: 'GET /pets/{petId}', answer }));
    expect((await arm(a, key, steps)).status).toBe(200);
    const statuses = [];
    for (let i = 0; i < steps.length + 2; i++) {
      const server = i % 2 === 0 ? b : a;
      const answer = await fetch(`${server.url}/pets/1`, { headers: headers(key, { 'x-request-id': `turn-${i}` }) });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([503, 500, 429, 503, 200, 500, 200, 200]);
    for (const server of [a, b]) {
      const read = await script(server, key);
      expect(read.done).toBe(true);
      expect(read.used.map((use) => [use.step, use.requestId])).toEqual(steps.map((_, i) => [i, `turn-${i}`]));
    }
  });

  it('many requests at once, through both, use each step once', async () => {
    const key = await newKey();
    await arm(b, key, [{ match: 'GET /pets/{petId}', answer: '503', times: 20 }]);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(`${(i % 2 === 0 ? a : b).url}/pets/1`, { headers: headers(key, { 'x-request-id': `burst-${i}` }) }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 503)).toHaveLength(20);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    const read = await script(a, key);
    expect(read.used).toHaveLength(20);
    expect(new Set(read.used.map((use) => use.requestId)).size).toBe(20);
    // The requests that used a step are those answered 503.
    const failed = answers.flatMap((answer, i) => (answer.status === 503 ? [`burst-${i}`] : []));
    expect(read.used.map((use) => use.requestId).sort()).toEqual(failed.sort());
  });
});
