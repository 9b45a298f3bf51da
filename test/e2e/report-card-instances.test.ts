import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeysRepository } from '../../src/keys/repository.js';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { postgresAvailable } from '../helpers/database.js';
import type { Server } from '../helpers/process.js';
import { redisForTests } from '../helpers/redis.js';
import { closeAll, openConnections, sendOn } from '../helpers/parallel.js';
import { type ScaledOut, scaledOut } from '../helpers/scaled-out.js';

// Two real server processes sharing one PostgreSQL schema and one Redis grade
// a test key as one would (docs/testing-clients.md#is-my-client-a-good-api-citizen).
const redis = await redisForTests();
const available = (await postgresAvailable()) && redis !== null;

describe.skipIf(!available)('the report card across instances sharing PostgreSQL and Redis', () => {
  let two: ScaledOut;
  let a: Server;
  let b: Server;
  beforeAll(async () => {
    two = await scaledOut(redis!.url);
    ({ a, b } = two);
  });
  afterAll(async () => two?.stop());
  const newKey = (input: Parameters<KeysRepository['create']>[0]) => two.newKey(input);

  it('one test key answered in turns by both instances is graded as one instance grades another key sent the same requests: the same card, check by check', async () => {
    const card = async (servers: Server[]) => {
      const { key } = await newKey({ plan: 'free', test: true });
      let turn = 0;
      const send = async (
        path: string,
        {
          method = 'GET',
          headers = {},
          body,
        }: { method?: string; headers?: Record<string, string>; body?: object } = {},
      ) => {
        const server = servers[turn++ % servers.length]!;
        const sent = {
          'x-api-key': key,
          'x-request-id': `step-${turn}`,
          'petstore-version': NEWEST_VERSION,
          ...headers,
        };
        // A connection of its own for each request, opened once the answer before it was read: no request is
        // in flight of another's answer, whichever instance answers (the in-flight allowance plays no part).
        const [socket] = await openConnections(Number(new URL(server.url).port), 1);
        try {
          return await sendOn(socket!, { method, path, headers: sent, ...(body ? { body } : {}) });
        } finally {
          closeAll([socket!]);
        }
      };
      const advance = (seconds: number) =>
        fetch(`${servers[0]!.url}/test-clock/advance`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ seconds }),
        });
      // Each check's situation, right or wrong, in one script, on the
      // key's frozen clock: every wait is what the script advances.
      await fetch(`${servers[0]!.url}/test-clock/freeze`, { method: 'POST', headers: { 'x-api-key': key } });
      await send('/pets/1', { headers: { 'petstore-version': '' } });
      for (let i = 0; i < 4; i++) await send('/pets/1');
      await send('/pets/1', { headers: { 'if-none-match': '"x"' } });
      expect((await send('/pets?limit=1', { headers: { prefer: 'fault=429' } })).status).toBe(429);
      await send('/pets?limit=2');
      await advance(61);
      // Repeats 1 s apart in the key's frozen time: a fixed pace, whatever the machine's load adds in real time.
      for (let i = 0; i < 4; i++) {
        if (i > 0) await advance(1);
        await send('/pets/2', { headers: { prefer: 'fault=500' } });
      }
      expect(
        (
          await send('/store/orders', {
            method: 'POST',
            body: { petId: 1 },
            headers: { prefer: 'fault=503', 'idempotency-key': 'o-1' },
          })
        ).status,
      ).toBe(503);
      await advance(2);
      expect((await send('/store/orders', { method: 'POST', body: { petId: 1 } })).status).toBe(201);
      const page = JSON.parse((await send('/pets?limit=2')).body) as { nextCursor: string };
      await send(`/pets?limit=2&cursor=${page.nextCursor}`);
      expect((await send(`/pets?limit=2&cursor=${page.nextCursor.slice(0, -2)}AA`)).status).toBe(400);
      const graded = (await (
        await fetch(`${servers[1 % servers.length]!.url}/report-card`, { headers: { 'x-api-key': key } })
      ).json()) as {
        requests: number;
        checks: {
          id: string;
          status: string;
          seen: number;
          failed: number;
          docs: string;
          failures: { requestId: string; detail: string }[];
        }[];
      };
      // The figures of a wait measured in real time differ by milliseconds from run to run; the words do not.
      return {
        requests: graded.requests,
        checks: graded.checks.map(({ docs: _, ...c }) => ({
          ...c,
          failures: c.failures.map((f) => ({ requestId: f.requestId, detail: f.detail.replace(/\d+(\.\d+)?/g, '#') })),
        })),
      };
    };
    const inTurns = await card([a, b]);
    const one = await card([a]);
    expect(inTurns).toEqual(one);
    expect(inTurns.requests).toBe(17);
    const statuses = Object.fromEntries(inTurns.checks.map((c) => [c.id, c.status]));
    expect(statuses).toEqual({
      'honours-retry-after': 'failed',
      'not-banned': 'passed',
      paces: 'untested',
      'backs-off': 'failed',
      'idempotent-retries': 'failed',
      revalidates: 'failed',
      'pins-version': 'failed',
      'stops-after-gone': 'untested',
      'cursor-untouched': 'failed',
      'webhook-receiver': 'untested',
      'reuses-tokens': 'untested',
      'renews-expired-tokens': 'untested',
      'resumes-streams': 'untested',
    });
  });
});
