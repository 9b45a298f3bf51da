import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';

/**
 * Who is banned (docs/rate-limits.md#bans): a key that gets 10 or more `429`s within 60 s for
 * requests sent before the `Retry-After` of its previous `429` had elapsed. A client that waits every
 * `Retry-After` it is given is never banned, however many `429`s it meets, injected or real. Each
 * request here comes alone (`inject`: no other connection is open), so no in-flight allowance applies.
 */

let t: TestApp;
afterEach(async () => t.close());

const sender = (key: string) => (url: string, prefer?: string) =>
  t.app.inject({ url, headers: { 'x-api-key': key, ...(prefer ? { prefer } : {}) } });

const retryAfter = (answer: LightMyRequestResponse) => Number(answer.headers['retry-after']);
const banOf = async (key: string) =>
  json<{ ban: unknown }>(await t.app.inject({ url: '/usage', headers: { 'x-api-key': key } })).ban;

describe('the ban rule', () => {
  it('an injected 429 asks for one second, as a real limiter with room would', async () => {
    t = await testApp();
    const send = sender(await t.newKey({ plan: 'free', test: true }));
    const refused = await send('/pets/1', 'fault=429');
    expect(refused.statusCode).toBe(429);
    expect(retryAfter(refused)).toBe(1);
    expect(json(refused)).toMatchObject({ retryAfter: 1 });
  });

  it('a patient client is never banned: ten real 429s and twelve injected ones within a minute, each Retry-After waited', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'free', test: true });
    const send = sender(key);
    // The minute spent a request a second, so that each slot frees a second after the one before.
    for (let i = 0; i < 60; i++) {
      expect((await send('/pets/2')).statusCode).toBe(200);
      t.clock.advance(1_000);
    }
    const started = t.clock();
    let refusals = 0;
    for (let sent = 0; refusals < 10 && sent < 40; sent++) {
      const answer = await send('/pets/3');
      if (answer.statusCode !== 429) continue;
      expect(json(answer)).toMatchObject({ type: expect.stringMatching(/\/rate-limited$/) });
      refusals++;
      t.clock.advance(retryAfter(answer) * 1000);
    }
    expect(refusals).toBe(10);
    for (let i = 0; i < 12; i++) {
      const refused = await send('/pets/1', 'fault=429');
      expect(refused.statusCode).toBe(429);
      t.clock.advance(retryAfter(refused) * 1000);
    }
    expect(t.clock() - started).toBeLessThan(60_000);
    expect(await banOf(key)).toBeNull();
  });

  it('a client that keeps sending after a 429 is banned: ten 429s within a minute before the previous Retry-After elapsed', async () => {
    t = await testApp();
    const key = await t.newKey('free');
    const send = sender(key);
    for (let i = 0; i < 60; i++) await send('/pets/1');
    // The first 429 follows no other: it does not count. Each of the next ten comes before the wait it was told.
    for (let i = 0; i < 10; i++) {
      const refused = await send('/pets/1');
      expect(json(refused)).toMatchObject({ type: expect.stringMatching(/\/rate-limited$/) });
      t.clock.advance(100);
    }
    expect(await banOf(key)).toBeNull();
    const last = await send('/pets/1');
    expect(json(last)).toMatchObject({ type: expect.stringMatching(/\/rate-limited$/) });
    expect(retryAfter(last)).toBe(60);
    expect(await banOf(key)).not.toBeNull();
    expect(json(await send('/pets/1'))).toMatchObject({ type: expect.stringMatching(/\/key-banned$/) });
  });

  it('waiting some Retry-Afters and not others: only the impatient 429s count', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'free', test: true });
    const send = sender(key);
    // Nine impatient 429s (after the first), waited once in between: nine counted, no ban.
    for (let i = 0; i < 6; i++) await send('/pets/1', 'fault=429');
    t.clock.advance(1_000);
    for (let i = 0; i < 5; i++) await send('/pets/1', 'fault=429');
    expect(await banOf(key)).toBeNull();
    // The tenth impatient one within the minute starts the ban.
    await send('/pets/1', 'fault=429');
    expect(await banOf(key)).not.toBeNull();
  });
});
