/**
 * The client's retries and backoff against real faults: test keys (faults/) on the real service, over
 * HTTP with the real `fetch`. Server and client share a fake clock, so that the waits the client
 * chooses are recorded instead of slept.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  NetworkError,
  PetstoreClient,
  type PetstoreClientOptions,
  RateLimitedError,
  type ResponseEvent,
  ServiceUnavailableError,
} from '../../client/index.js';
import { draw, seeded } from '../../src/faults/draws.js';
import type { FaultProfile } from '../../src/faults/profile.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { sharedClock } from './harness.js';

let t: TestApp;
let baseUrl: string;
beforeEach(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterEach(async () => t.close());

type Profile = Omit<FaultProfile, 'setAt'>;

/** A new test key, and a client of it that records its waits and every answer it saw. */
async function clientOf(profile?: Profile, options: Partial<PetstoreClientOptions> = {}) {
  const { key } = await t.keys.create({ plan: 'pro', test: true, faults: profile });
  const sleeps: number[] = [];
  const answers: ResponseEvent[] = [];
  const { now, sleep } = sharedClock(t.clock);
  const base = { apiKey: key, baseUrl, now, random: () => 0.5, onDeprecation: () => {} };
  const client = new PetstoreClient({
    ...base,
    sleep: (ms) => (sleeps.push(ms), sleep!(ms)),
    onResponse: (event) => answers.push(event),
    ...options,
  });
  // The same key without the preference: to read what the service counted and stored.
  const reader = new PetstoreClient({ ...base, sleep });
  return { client, reader, sleeps, answers };
}

/** The first seed whose sequence starts with these draws' faults (found in the public sequence, as a user would). */
function seedStartingWith(profile: Omit<Profile, 'seed'>, faults: (string | undefined)[]): number {
  for (let seed = 0; ; seed++) {
    const next = seeded(seed);
    if (faults.every((fault) => draw(next, { ...profile, seed, setAt: '' }).fault === fault)) return seed;
  }
}

describe('the client against a test key', () => {
  it('Prefer: fault=503: waits no less than Retry-After between attempts, gives up after maxAttempts, and every attempt counted', async () => {
    const { client, reader, sleeps, answers } = await clientOf(undefined, {
      prefer: 'fault=503',
      maxAttempts: 4,
      backoffBaseMs: 1_000,
    });
    await expect(client.getPet(1)).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(answers.map((a) => [a.status, a.preferenceApplied])).toEqual(Array(4).fill([503, 'fault=503']));
    // Retry-After says 5 s; full-jitter backoff (0.5 × 1, 2, 4 s) asks for less each time.
    expect(sleeps).toEqual([5_000, 5_000, 5_000]);
    expect((await reader.usage()).windows.minute.used).toBe(4);
  });

  it('Prefer: fault=429: holds every attempt back until Retry-After plus jitter, then gives up with the refusal, which spent no quota', async () => {
    const { client, reader, answers } = await clientOf(undefined, {
      prefer: 'fault=429',
      maxAttempts: 3,
      retryJitterMs: 1_000,
    });
    const started = t.clock();
    const refusal = await client.listPets().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(RateLimitedError);
    // An injected refusal says what a real limiter with room would: one second.
    expect((refusal as RateLimitedError).retryAfter).toBe(1);
    expect(answers.map((a) => a.status)).toEqual([429, 429, 429]);
    // Each refusal said 1 s; the client added 0.5 × 1 s of jitter before each of the two retries.
    expect(t.clock() - started).toBeGreaterThanOrEqual(2 * 1_500);
    expect((await reader.usage()).windows.minute.used).toBe(0);
  });

  it('a reset after the order was placed: placeOrder retries with its Idempotency-Key and gets the one order', async () => {
    const profile = { rate: 0.5, faults: ['reset'] as FaultProfile['faults'], latencyMs: null };
    const seed = seedStartingWith(profile, ['reset', undefined]);
    const { client, reader, answers, sleeps } = await clientOf({ ...profile, seed });
    const order = await client.placeOrder({ petId: 1, quantity: 3 });
    expect(order).toMatchObject({ petId: 1, quantity: 3, status: 'placed' });
    // The first attempt got no answer at all; the retry got the order the first one placed.
    expect(answers.map((a) => a.status)).toEqual([201]);
    expect(sleeps).toHaveLength(1);
    expect((await reader.listOrders()).data).toEqual([order]);
  });

  it('Prefer: fault=reset on every attempt: a NetworkError after maxAttempts, and one order all the same', async () => {
    const { client, reader, sleeps } = await clientOf(undefined, { prefer: 'fault=reset', maxAttempts: 3 });
    await expect(client.placeOrder({ petId: 1, quantity: 1 })).rejects.toBeInstanceOf(NetworkError);
    expect(sleeps).toHaveLength(2);
    expect((await reader.listOrders()).data).toHaveLength(1);
  });

  it('a seeded profile of 503s, 429s and resets: every call ends with its answer, and another key of the same seed meets the same run', async () => {
    const profile: Profile = { rate: 0.3, faults: ['503', '429', 'reset'], latencyMs: null, seed: 2026 };
    const run = async () => {
      const { client, answers, sleeps } = await clientOf(profile, { maxAttempts: 10 });
      for (let petId = 1; petId <= 10; petId++) expect((await client.getPet(petId)).id).toBe(petId);
      return { statuses: answers.map((a) => a.status), attempts: sleeps.length + 10 };
    };
    const first = await run();
    // Faults of each kind were met: refusals, outages, and resets (attempts without any answer).
    expect(first.statuses).toContain(429);
    expect(first.statuses).toContain(503);
    expect(first.attempts).toBeGreaterThan(first.statuses.length);
    expect(await run()).toEqual(first);
  });
});
