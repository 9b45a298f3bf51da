import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { postgresAvailable } from '../helpers/database.js';
import { closeAll, openConnections, sendAll, sendOn } from '../helpers/parallel.js';
import type { Server } from '../helpers/process.js';
import { redisForTests } from '../helpers/redis.js';
import { type ScaledOut, scaledOut } from '../helpers/scaled-out.js';

/**
 * Two instances on PostgreSQL + Redis under what a conformance runner with parallel jobs does all day:
 * many requests of one test key at once, through one instance or both. Every advance of the key's
 * clock counts, every request is graded (none dropped under contention), and nothing a burst leaves
 * behind spares a careless client later. Each case runs ten times, each time with a key of its own.
 */

const redis = await redisForTests();
const available = (await postgresAvailable()) && redis !== null;
const RUNS = 10;

describe.skipIf(!available)('parallel requests of one test key, scaled out', () => {
  let two: ScaledOut;
  let a: Server;
  let b: Server;
  const ports: number[] = [];

  beforeAll(async () => {
    two = await scaledOut(redis!.url);
    ({ a, b } = two);
    ports.push(Number(new URL(a.url).port), Number(new URL(b.url).port));
  });
  afterAll(async () => two?.stop());

  /** A new test key, once both instances know it. */
  const newKey = async (plan: 'free' | 'pro' = 'pro') => (await two.newKey({ plan, test: true })).key;

  const headers = (key: string, more: Record<string, string> = {}) => ({
    'x-api-key': key,
    'petstore-version': NEWEST_VERSION,
    ...more,
  });

  async function withConnections<T>(to: number[], count: number, use: (sockets: Socket[]) => Promise<T>): Promise<T> {
    const sockets = await openConnections(to, count);
    try {
      return await use(sockets);
    } finally {
      closeAll(sockets);
    }
  }

  it('twenty parallel advances of 10 s, split over both instances, move the clock 200 s', async () => {
    for (let run = 0; run < RUNS; run++) {
      const key = await newKey();
      const clockThrough = async (server: Server) =>
        Date.parse(
          (
            (await (await fetch(`${server.url}/test-clock`, { headers: { 'x-api-key': key } })).json()) as {
              now: string;
            }
          ).now,
        );
      await fetch(`${a.url}/test-clock/freeze`, { method: 'POST', headers: { 'x-api-key': key } });
      const frozenAt = await clockThrough(b);
      const answers = await withConnections(ports, 20, (sockets) =>
        sendAll(
          sockets,
          sockets.map(() => ({
            method: 'POST',
            path: '/test-clock/advance',
            headers: { 'x-api-key': key },
            body: { seconds: 10 },
          })),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
      // Each answer is the clock as its own advance left it: 10 s, 20 s, … 200 s past where it stood.
      const moved = answers.map(
        (answer) => (Date.parse((JSON.parse(answer.body) as { now: string }).now) - frozenAt) / 1000,
      );
      expect(
        moved.sort((x, y) => x - y),
        `run ${run}`,
      ).toEqual(Array.from({ length: 20 }, (_, i) => 10 * (i + 1)));
      for (const server of [a, b]) expect((await clockThrough(server)) - frozenAt, `run ${run}`).toBe(200_000);
    }
  });

  it('fifty parallel requests through one instance are all graded', async () => {
    for (let run = 0; run < RUNS; run++) {
      const key = await newKey();
      const answers = await withConnections([ports[run % 2]!], 50, (sockets) =>
        sendAll(
          sockets,
          sockets.map((_, i) => ({ path: `/pets/${(i % 10) + 1}`, headers: headers(key) })),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));
      const card = (await (await fetch(`${b.url}/report-card`, { headers: { 'x-api-key': key } })).json()) as {
        requests: number;
      };
      expect(card.requests, `run ${run}`).toBe(50);
    }
  });

  it('after such a burst, a request at once on a new connection after an injected 429 fails honours-retry-after', async () => {
    for (let run = 0; run < RUNS; run++) {
      const key = await newKey();
      const port = ports[run % 2]!;
      await withConnections([port], 50, (sockets) =>
        sendAll(
          sockets,
          sockets.map((_, i) => ({ path: `/pets?limit=${(i % 5) + 1}`, headers: headers(key) })),
        ),
      );
      const [refused, careless] = await withConnections([port], 1, async ([socket]) => [
        await sendOn(socket!, { path: '/pets/1', headers: headers(key, { prefer: 'fault=429' }) }),
        // Opened once the 429 was read: no allowance.
        await withConnections([port], 1, ([late]) =>
          sendOn(late!, { path: '/pets/2', headers: headers(key, { 'x-request-id': `careless-${run}` }) }),
        ),
      ]);
      expect(refused!.status).toBe(429);
      expect(careless!.status).toBe(200);
      const card = (await (await fetch(`${a.url}/report-card`, { headers: { 'x-api-key': key } })).json()) as {
        checks: { id: string; status: string; failures: { requestId: string }[] }[];
      };
      const check = card.checks.find((c) => c.id === 'honours-retry-after')!;
      expect(check.status, `run ${run}`).toBe('failed');
      expect(check.failures[0]!.requestId).toBe(`careless-${run}`);
    }
  });
});
