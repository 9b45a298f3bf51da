import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Check, client as clientOf, failedAt, passed } from './graded-client.js';

/**
 * The card, and the checks of waits and limits (docs/testing-clients.md#is-my-client-a-good-api-citizen), each shown
 * both ways: a client that does it right and one that does it wrong, through the situation, with the failure's request
 * id and detail. Waits pass by the key's test clock or the service's fake clock; nothing sleeps. (The checks of
 * requests: ./checks-requests.test.ts; the receiver exam: ./exam.test.ts; the in-flight allowance and a real reset
 * connection: ./parallel-clients.test.ts and ./lost-answers.test.ts; backs-off's bound: ./backs-off.unit.test.ts.)
 */

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});
const client = (plan?: 'free' | 'pro', apiVersion?: string) => clientOf(t, plan, apiVersion);

describe('the card itself', () => {
  it('every check is untested on a new key, in the contract’s order; the card and the clock count nothing and are not graded', async () => {
    const c = await client();
    await c.advance(1);
    const card = await c.card();
    expect(card.requests).toBe(0);
    expect(card.checks.map((check) => check.id)).toEqual([
      'honours-retry-after',
      'not-banned',
      'paces',
      'backs-off',
      'idempotent-retries',
      'revalidates',
      'pins-version',
      'stops-after-gone',
      'cursor-untouched',
      'webhook-receiver',
      'reuses-tokens',
      'renews-expired-tokens',
      'resumes-streams',
    ]);
    expect(card.checks.every((check) => check.status === 'untested' && check.seen === 0)).toBe(true);
    const usage = await t.request({ url: '/usage', headers: { 'x-api-key': c.key } });
    expect(usage.headers['x-ratelimit-remaining']).toBe('60');
  });

  it('is answered during a ban, to test keys only (403 test-key-required for a live key), and DELETE starts it over', async () => {
    const c = await client();
    await c.send('/pets/1', { pinned: false });
    expect((await c.check('pins-version')).status).toBe('failed');
    for (let i = 0; i < 80; i++) await c.send('/pets?limit=1');
    expect((await c.send('/pets?limit=1')).headers['retry-after']).toBeDefined();
    const during = await t.request({ url: '/report-card', headers: { 'x-api-key': c.key } });
    expect(during.statusCode).toBe(200);
    const fresh = await t.request({ method: 'DELETE', url: '/report-card', headers: { 'x-api-key': c.key } });
    expect(fresh.statusCode).toBe(200);
    expect(json<{ requests: number; checks: Check[] }>(fresh)).toMatchObject({ requests: 0 });
    expect((await c.card()).checks.every((check) => check.status === 'untested')).toBe(true);
    const live = await t.newKey('free');
    for (const method of ['GET', 'DELETE'] as const) {
      const refused = await t.request({ method, url: '/report-card', headers: { 'x-api-key': live } });
      expect(refused.statusCode).toBe(403);
      expect(json(refused).type).toMatch(/\/problems\/test-key-required$/);
    }
  });

  it('a live key is never graded: its card does not exist and its requests change no test key’s', async () => {
    const live = await t.newKey('free');
    const c = await client();
    for (let i = 0; i < 3; i++) await t.request({ url: '/pets/1', headers: { 'x-api-key': live } });
    expect((await c.card()).requests).toBe(0);
  });
});

describe('honours-retry-after', () => {
  it('after a 429: waiting Retry-After passes; a request before it fails, naming it', async () => {
    const good = await client();
    const refused = await good.send('/pets?limit=1', { headers: { prefer: 'fault=429' } });
    expect(refused.statusCode).toBe(429);
    await good.advance(Number(refused.headers['retry-after']));
    expect((await good.send('/pets?limit=1')).statusCode).toBe(200);
    passed(await good.check('honours-retry-after'));

    const bad = await client();
    const first = await bad.send('/pets?limit=1', { headers: { prefer: 'fault=429' } });
    t.clock.advance(210);
    const early = await bad.send('/store/orders');
    failedAt(
      await bad.check('honours-retry-after'),
      early.id,
      new RegExp(`^sent 0.21 s after a 429; Retry-After said ${first.headers['retry-after']}$`),
    );
  });

  it('after a 503: the same request waits Retry-After (another one need not); repeating it sooner fails', async () => {
    const good = await client();
    const unavailable = await good.send('/pets/1', { headers: { prefer: 'fault=503' } });
    expect(unavailable.statusCode).toBe(503);
    const seconds = Number(unavailable.headers['retry-after']);
    expect((await good.send('/pets/2')).statusCode).toBe(200);
    t.clock.advance(seconds * 1000);
    expect((await good.send('/pets/1')).statusCode).toBe(200);
    passed(await good.check('honours-retry-after'));

    const bad = await client();
    await bad.send('/pets/1', { headers: { prefer: 'fault=503' } });
    const again = await bad.send('/pets/1');
    failedAt(
      await bad.check('honours-retry-after'),
      again.id,
      new RegExp(`^repeated 0 s after a 503; Retry-After said ${seconds}$`),
    );
  });
});

/** Sends until a request of `c` is refused 429; answers the refusal. */
async function untilRefused(c: Awaited<ReturnType<typeof client>>) {
  for (let i = 0; i < 200; i++) {
    const answer = await c.send('/pets?limit=1');
    if (answer.statusCode === 429) return answer;
  }
  throw new Error('never refused');
}

describe('not-banned', () => {
  it('a client that stops at its 429 is never banned; one that sends on through 429s is, and the request that started the ban is named', async () => {
    const good = await client();
    const refused = await untilRefused(good);
    await good.advance(Number(refused.headers['retry-after']));
    expect((await good.send('/pets?limit=1')).statusCode).toBe(200);
    passed(await good.check('not-banned'));

    const bad = await client();
    await untilRefused(bad);
    let banning: string | undefined;
    for (let i = 0; i < 100 && !banning; i++) {
      const answer = await bad.send('/pets?limit=1');
      if (
        json<{ type: string }>(answer).type.endsWith('/key-banned') ||
        (answer.statusCode === 429 && Number(answer.headers['retry-after']) > 60)
      )
        banning = answer.id;
    }
    const check = await bad.check('not-banned');
    expect(check.status).toBe('failed');
    expect(check.failed).toBe(1);
    expect(check.failures[0]!.detail).toMatch(/^banned for \d+ s after sending on through 429s$/);
    expect(banning).toBeDefined();
  });
});

describe('not-banned under injected 429s', () => {
  it('a client that waits each refusal’s Retry-After is never banned, however many 429s its faults force', async () => {
    const c = await client();
    for (let i = 0; i < 15; i++) {
      const refused = await c.send('/pets?limit=1', { headers: { prefer: 'fault=429' } });
      expect(refused.statusCode).toBe(429);
      // As a real limiter with room would say.
      expect(refused.headers['retry-after']).toBe('1');
      await c.advance(Number(refused.headers['retry-after']));
    }
    expect((await c.send('/pets?limit=1')).statusCode).toBe(200);
    passed(await c.check('not-banned'));
    passed(await c.check('honours-retry-after'));
  });
});

describe('paces', () => {
  it('after X-RateLimit-Remaining: 0, waiting for the next slot passes; a request before it fails', async () => {
    const good = await client();
    for (let i = 0; i < 60; i++) await good.send(`/pets/${(i % 5) + 1}`);
    const last = await good.send('/usage');
    expect(last.headers['x-ratelimit-remaining']).toBe('0');
    await good.advance(60);
    expect((await good.send('/pets/1')).statusCode).toBe(200);
    passed(await good.check('paces'));

    const bad = await client();
    for (let i = 0; i < 60; i++) await bad.send(`/pets/${(i % 5) + 1}`);
    await bad.advance(30);
    const early = await bad.send('/pets/1');
    expect(early.statusCode).toBe(429);
    failedAt(
      await bad.check('paces'),
      early.id,
      /^sent 30 s after X-RateLimit-Remaining: 0; the next slot was free 60 s after it$/,
    );
  });
});

describe('backs-off', () => {
  const failing = { headers: { prefer: 'fault=500' } };
  it('repeats after growing, jittered waits pass', async () => {
    const c = await client();
    expect((await c.send('/pets/1', failing)).statusCode).toBe(500);
    for (const wait of [140, 170, 730]) {
      t.clock.advance(wait);
      await c.send('/pets/1', failing);
    }
    passed(await c.check('backs-off'));
  });

  it('repeats at once fail; so do repeats at a fixed pace', async () => {
    const once = await client();
    await once.send('/pets/1', failing);
    let last = '';
    for (let i = 0; i < 3; i++) last = (await once.send('/pets/1', failing)).id;
    failedAt(
      await once.check('backs-off'),
      last,
      /^repeated GET \/pets\/1 3 times after a failure at once \(waits 0 ms, 0 ms, 0 ms\)$/,
    );

    const paced = await client();
    await paced.send('/pets/1', failing);
    for (let i = 0; i < 3; i++) {
      t.clock.advance(500);
      last = (await paced.send('/pets/1', failing)).id;
    }
    failedAt(await paced.check('backs-off'), last, /at a fixed pace \(waits 500 ms, 500 ms, 500 ms\)$/);
  });
});
