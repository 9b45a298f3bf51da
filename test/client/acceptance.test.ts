/**
 * The client against the real server, one fake clock shared by both: 150 `getPet` calls with a free key
 * all succeed, without a ban, meeting at most one 429 (none with pacing), in about the least simulated
 * time the limit allows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Pet, PetstoreClient } from '../../client/index.js';
import { PLAN_LIMITS } from '../../src/ratelimit/plans.js';
import { MINUTE_MS } from '../../src/ratelimit/state.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { clientOptions } from './harness.js';

const CALLS = 150;
const PER_MINUTE = PLAN_LIMITS.free.perMinute;
/**
 * Any 60 s admit at most PER_MINUTE requests, so request k (from 0) cannot be admitted before
 * floor(k / PER_MINUTE) minutes after the first; the server takes no simulated time to answer.
 */
const LEAST_MS = Math.floor((CALLS - 1) / PER_MINUTE) * MINUTE_MS;

let t: TestApp;
afterEach(async () => t.close());

async function run(pace: boolean, issue: 'burst' | 'one after another') {
  t = await testApp();
  const { record, key } = await t.keys.create({ plan: 'free' });
  const statuses: number[] = [];
  // The worst jitter the client can draw: the bound must hold for it too. Nothing kept to revalidate:
  // every call is a full read that counts (a 304 would count nothing; see the last test).
  const client = new PetstoreClient({
    ...clientOptions(t.app, t.clock, key),
    pace,
    cacheSize: 0,
    random: () => 0.999,
    onResponse: (e) => statuses.push(e.status),
  });
  const get = (i: number) => client.getPet((i % 10) + 1);
  const start = t.clock();
  let pets: Pet[] = [];
  if (issue === 'burst') pets = await Promise.all(Array.from({ length: CALLS }, (_, i) => get(i)));
  else for (let i = 0; i < CALLS; i++) pets.push(await get(i));
  const elapsed = t.clock() - start;
  const refusals = (await t.metrics.refusals.get()).values.reduce((sum, v) => sum + v.value, 0);
  const bans = (await t.metrics.bans.get()).values.reduce((sum, v) => sum + v.value, 0);
  return { pets, statuses, elapsed, refusals, bans, banned: await t.limiter.banOf(`key:${record.id}`) };
}

describe.each(['burst', 'one after another'] as const)('150 getPet calls with a free key, issued %s', (issue) => {
  it('without pacing: all succeed, at most one 429, never banned, within 5% of the least time', async () => {
    const r = await run(false, issue);
    expect(r.pets).toHaveLength(CALLS);
    expect(r.pets.every((pet) => pet.id >= 1)).toBe(true);
    expect(r.statuses.filter((s) => s === 429).length).toBeLessThanOrEqual(1);
    expect(r.statuses.filter((s) => s === 200)).toHaveLength(CALLS);
    expect(r.refusals).toBeLessThanOrEqual(1);
    expect(r.bans).toBe(0);
    expect(r.banned).toBeNull();
    expect(r.elapsed).toBeGreaterThanOrEqual(LEAST_MS);
    expect(r.elapsed).toBeLessThanOrEqual(LEAST_MS * 1.05);
  });

  it('with pacing: all succeed, no 429 at all, within 5% of the least time', async () => {
    const r = await run(true, issue);
    expect(r.pets).toHaveLength(CALLS);
    expect(r.statuses).toEqual(Array(CALLS).fill(200));
    expect(r.refusals).toBe(0);
    expect(r.bans).toBe(0);
    expect(r.banned).toBeNull();
    expect(r.elapsed).toBeGreaterThanOrEqual(LEAST_MS);
    expect(r.elapsed).toBeLessThanOrEqual(LEAST_MS * 1.05);
  });
});

it('with the answers it keeps, the same 150 calls of ten pets cost ten requests of quota and no wait', async () => {
  t = await testApp();
  const key = await t.newKey('free');
  const statuses: number[] = [];
  const client = new PetstoreClient({
    ...clientOptions(t.app, t.clock, key),
    onResponse: (e) => statuses.push(e.status),
  });
  const start = t.clock();
  for (let i = 0; i < CALLS; i++) expect((await client.getPet((i % 10) + 1)).id).toBe((i % 10) + 1);
  expect(t.clock() - start).toBe(0);
  expect(statuses.filter((s) => s === 200)).toHaveLength(10);
  expect(statuses.filter((s) => s === 304)).toHaveLength(CALLS - 10);
  expect(client.savedByCache).toBe(CALLS - 10);
  expect(client.rateLimit?.remaining).toBe(PER_MINUTE - 10);
});
