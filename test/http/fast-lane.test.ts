import { afterEach, describe, expect, it } from 'vitest';
import { TEST_STORE } from '../helpers/database.js';
import { apps, AwaitedLimiter, type Limiting, type Seen, side, type Step } from '../helpers/fast-lane.js';

/**
 * The fast lane (src/http/fast-lane.ts) answers `GET /pets/{petId}` in front of Fastify when the key
 * and the pet are in memory, and `GET /store/orders` when the key was answered that page before. A client must not be able to tell: the same sequence of requests, sent
 * over a socket to one app (where the lane answers what it can) and injected into Fastify in another
 * (where it never does), gets the same statuses, headers and bodies, the same access-log lines and
 * the same metrics. (What the lane hears of changes made outside it: fast-lane-turns.test.ts.)
 */

afterEach(async () => {
  await Promise.all(apps.splice(0).map((t) => t.close()));
});

describe('the fast lane', () => {
  it.each<Limiting>(['at once', 'awaited'])(
    'answers GET /pets/{petId} exactly as Fastify does: admitted, over the limit, banned, and what it leaves to Fastify (limiter deciding %s)',
    async (limiting) => {
      const socket = await side('socket', limiting);
      const inject = await side('inject', limiting);
      const steps: Step[] = [
        // The first request of a key reads it from the store (Fastify); later ones find it in memory.
        ...Array.from({ length: 60 }, (_, i): Step => ({ path: '/pets/1', key: 'free', wait: i === 0 ? 0 : 250 })),
        // Over the minute's 60: refused, until the tenth refusal starts a ban; then banned.
        ...Array.from({ length: 12 }, (): Step => ({ path: '/pets/1', key: 'free', wait: 100 })),
        // A pet not in memory yet: Fastify refuses it (a refusal never reads the pet).
        { path: '/pets/2', key: 'free', wait: 10 },
        // What the lane leaves to Fastify: a query string (a parameter the operation does not take: a 400), a pet that does not exist, a revoked key, no key.
        { path: '/pets/1?x=1', key: 'free', wait: 10 },
        { path: '/pets/999999', key: 'free', wait: 10 },
        { path: '/pets/1', key: 'revoked', wait: 10 },
        { path: '/pets/1', key: 'none', wait: 10 },
        // Past the ban: admitted again.
        { path: '/pets/1', key: 'free', wait: 3_600_000 },
      ];
      let laneAnswers = 0;
      for (const step of steps) {
        const { laneAnswered, ...viaSocket } = await socket.send(step);
        const { laneAnswered: injectReachedLane, ...viaInject } = await inject.send(step);
        expect(injectReachedLane, 'inject never reaches the lane').toBe(false);
        if (laneAnswered) laneAnswers++;
        expect(viaSocket, `${step.path} with ${step.key}`).toEqual(viaInject);
      }
      // The lane did answer: the free key's requests for pet 1 but the first. (On PostgreSQL fewer: a row
      // read more than a second ago on the test's clock, which jumps, is read again unless the channel's
      // last heartbeat, on the same clock, is younger; see db/change-feed.ts.)
      if (TEST_STORE === 'sqlite') expect(laneAnswers).toBe(59 + 12 + 1);
      else expect(laneAnswers).toBeGreaterThan(0);
      expect(socket.accessLines()).toEqual(inject.accessLines());
      expect(await socket.requestMetrics()).toEqual(await inject.requestMetrics());
    },
  );

  it("answers behind a trusted proxy too, logging the client's address as Fastify does", async () => {
    const env = { TRUST_PROXY: '127.0.0.1' };
    const socket = await side('socket', 'at once', undefined, env);
    const inject = await side('inject', 'at once', undefined, env);
    const steps: Step[] = [
      { path: '/pets/1', key: 'free', wait: 0, forwardedFor: '203.0.113.7' },
      { path: '/pets/1', key: 'free', wait: 10, forwardedFor: '203.0.113.7' },
      // A chain through a second, untrusted hop: the address that hop gives is not believed.
      { path: '/pets/1', key: 'free', wait: 10, forwardedFor: '198.51.100.9, 203.0.113.8' },
      { path: '/pets/1', key: 'free', wait: 10 },
    ];
    const laneAnswered = [];
    for (const step of steps) {
      const { laneAnswered: answered, ...viaSocket } = await socket.send(step);
      const { laneAnswered: _, ...viaInject } = await inject.send(step);
      laneAnswered.push(answered);
      expect(viaSocket).toEqual(viaInject);
    }
    expect(laneAnswered).toEqual([false, true, true, true]);
    expect(socket.accessLines()).toEqual(inject.accessLines());
    const addresses = socket.accessLines().map(({ req }) => (req as { remoteAddress: string }).remoteAddress);
    expect(addresses).toEqual(['203.0.113.7', '203.0.113.7', '203.0.113.8', '127.0.0.1']);
  });

  it('hands a request whose limiter call fails to Fastify, which counts it once', async () => {
    const socket = await side('socket', 'awaited');
    const step: Step = { path: '/pets/1', key: 'free', wait: 0 };
    expect((await socket.send(step)).laneAnswered).toBe(false);
    (socket.limiter as AwaitedLimiter).failNext = true;
    const answer = await socket.send(step);
    expect(answer.status).toBe(200);
    expect(answer.headers['x-ratelimit-remaining']).toBe('58');
    expect((await socket.send(step)).laneAnswered).toBe(true);
  });

  it('leaves a deprecated operation past its sunset to Fastify, which answers 410', async () => {
    const socket = await side('socket');
    const step: Step = { path: '/pets/1', key: 'free', wait: 0 };
    expect((await socket.send(step)).status).toBe(200);
    expect((await socket.send(step)).laneAnswered).toBe(true);
    socket.t.clock.set('2027-07-01T00:00:00.000Z');
    const gone = await socket.send(step);
    expect(gone.status).toBe(410);
    expect(gone.laneAnswered).toBe(false);
  });

  it("answers GET /store/orders exactly as Fastify does, and never a page older than its key's last change", async () => {
    const socket = await side('socket');
    const inject = await side('inject');
    const list = (path = '/store/orders'): Step => ({ path, key: 'free', wait: 100 });
    const steps: Step[] = [
      // The first read of a page is Fastify's; the same URL again, the lane's (on SQLite).
      list(),
      list(),
      { path: '/store/orders', key: 'free', wait: 100, method: 'POST', body: { petId: 1 } },
      list(),
      list(),
      { path: '/store/orders', key: 'free', wait: 100, method: 'POST', body: { petId: 2, quantity: 3 } },
      list('/store/orders?limit=1'),
      list('/store/orders?limit=1'),
      list(),
      { path: '/store/orders/1', key: 'free', wait: 100, method: 'DELETE' },
      list('/store/orders?limit=1'),
      list('/store/orders?status=cancelled'),
      list('/store/orders?status=cancelled'),
      // What the lane leaves to Fastify: a URL Fastify refuses, a revoked key, no key.
      list('/store/orders?limit=0'),
      list('/store/orders?limit=0'),
      { path: '/store/orders', key: 'revoked', wait: 10 },
      { path: '/store/orders', key: 'none', wait: 10 },
    ];
    const answers: Seen[] = [];
    const laneAnswered: string[] = [];
    for (const [i, step] of steps.entries()) {
      const { laneAnswered: lane, ...viaSocket } = await socket.send(step);
      const { laneAnswered: _, ...viaInject } = await inject.send(step);
      if (lane) laneAnswered.push(`${i}: ${step.method ?? 'GET'} ${step.path}`);
      expect(viaSocket, `${i}: ${step.method ?? 'GET'} ${step.path} with ${step.key}`).toEqual(viaInject);
      answers.push(viaSocket);
    }
    // Every page shows what was placed and cancelled before it.
    const orders = (i: number) => (JSON.parse(answers[i]!.body) as { data: { id: number; status: string }[] }).data.map((o) => `${o.id} ${o.status}`);
    expect(orders(1)).toEqual([]);
    expect(orders(4)).toEqual(['1 placed']);
    expect(orders(7)).toEqual(['1 placed']);
    expect(orders(8)).toEqual(['1 placed', '2 placed']);
    expect(orders(10)).toEqual(['1 cancelled']);
    expect(orders(12)).toEqual(['1 cancelled']);
    // The lane answered the repeated reads with nothing changed in between, and only where every change is heard at once.
    expect(laneAnswered).toEqual(
      TEST_STORE === 'sqlite' ? ['1: GET /store/orders', '4: GET /store/orders', '7: GET /store/orders?limit=1', '12: GET /store/orders?status=cancelled'] : [],
    );
    expect(socket.accessLines()).toEqual(inject.accessLines());
    expect(await socket.requestMetrics()).toEqual(await inject.requestMetrics());
  });
});
