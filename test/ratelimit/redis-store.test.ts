import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_BAN_RULES } from '../../src/ratelimit/decision.js';
import { RESET_HEADER, rateLimitHeaders } from '../../src/ratelimit/headers.js';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import { LOG_SLACK_MS } from '../../src/ratelimit/redis-script.js';
import { readLimiterState } from '../../src/ratelimit/redis-state.js';
import { limiterKeys, MAX_CALLS_PER_RUN, RedisLimiterStore } from '../../src/ratelimit/redis-store.js';
import type { LimiterStore } from '../../src/ratelimit/store.js';
import { redisForTests, unstamped } from '../helpers/redis.js';

const redis = await redisForTests();
const url = redis?.url ?? '';
// Every key of this run starts with its own prefix, so runs never meet and the cleanup finds them all.
const prefix = `test:${randomUUID()}:`;
const oneAMinute: Policy = { name: 'enterprise', perMinute: 1, perDay: 1000 };
const NOON = Date.parse('2024-03-01T12:00:00.000Z');

describe.skipIf(!redis)('RedisLimiterStore', () => {
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(url);
  });
  afterAll(async () => {
    const keys = await scanAll(`${prefix}*`);
    if (keys.length > 0) await admin.unlink(...keys);
    await admin.quit();
  });

  const storeAt = (clock?: () => number, rules = DEFAULT_BAN_RULES) =>
    new RedisLimiterStore(new Redis(url), { clock, rules, prefix });

  it('keeps all of one caller’s keys under one hash tag, so the script is Cluster safe', async () => {
    const store = storeAt(() => NOON);
    const caller = 'key:{odd}caller';
    // An admission, a 429, and one sent within its wait: every key is written.
    for (let i = 0; i < 3; i++) await store.hit(caller, oneAMinute);
    const found = await scanAll(`${prefix}{key:*`);
    expect(found.sort()).toEqual([...limiterKeys(prefix, caller)].sort());
    // Redis hashes only what lies between the first `{` and the next `}`: the same for every key.
    expect(new Set(found.map((key) => key.slice(key.indexOf('{') + 1, key.indexOf('}', key.indexOf('{')))))).toEqual(
      new Set(['key:{odd']),
    );
    await store.close();
  });

  it('reads the time from Redis when given no clock', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2001-01-01T00:00:00Z'));
    const store = storeAt();
    try {
      const before = await redisNow();
      const verdict = await store.hit(randomUUID(), oneAMinute);
      const after = await redisNow();
      expect(verdict.at).toBeGreaterThanOrEqual(before);
      expect(verdict.at).toBeLessThanOrEqual(after);
      const reset = Number(rateLimitHeaders(verdict)[RESET_HEADER]);
      expect(reset).toBeGreaterThanOrEqual(Math.ceil((before + 60_000) / 1000));
      expect(reset).toBeLessThanOrEqual(Math.ceil((after + 60_000) / 1000));
    } finally {
      vi.useRealTimers();
      await store.close();
    }
  });

  it('lets each key expire when what it holds no longer counts: exactly, or for the minute log at most LOG_SLACK_MS later', async () => {
    let now = NOON;
    const store = storeAt(() => now);
    const caller = randomUUID();
    const [minute, rejections, state] = limiterKeys(prefix, caller);
    const ttls = async () => Promise.all([minute, rejections, state].map((key) => admin.pttl(key)));
    await store.hit(caller, oneAMinute);
    // The log's lifetime is set once in a while, not at every admission: its newest entry's minute and the slack.
    const logLife = 60_000 + LOG_SLACK_MS;
    expectTtls(await ttls(), [logLife, -2, 12 * 3_600_000]); // today's count stands until midnight
    now += 30_000;
    await store.hit(caller, oneAMinute);
    // A refusal leaves the log's lifetime as its admission set it: 60 s on Redis's clock from then,
    // which this test's jump of 30 s does not move (on Redis's own clock: the same instant, NOON + 60 s).
    // The first 429 follows no other: nothing counts toward a ban, only its wait is kept, in the state.
    expectTtls(await ttls(), [logLife, -2, 12 * 3_600_000 - 30_000]);
    await store.hit(caller, oneAMinute);
    // Sent within that wait, the next one counts: its rejection is kept for the ban rule's 60 s.
    expectTtls(await ttls(), [logLife, 60_000, 12 * 3_600_000 - 30_000]);
    for (let i = 0; i < 9; i++) await store.hit(caller, oneAMinute);
    // The 10th rejection that counts starts a ban ending in 60 s; its escalation history lasts 24 h beyond that.
    expectTtls(await ttls(), [logLife, -2, 60_000 + 86_400_000]);
    await store.unban(caller);
    expectTtls(await ttls(), [logLife, -2, 60_000 + 86_400_000]);
    await store.close();
  });

  it('keeps an admission counted to the last millisecond of its minute, a refusal just before it notwithstanding', async () => {
    // A refusal used to set the log's lifetime again, relative to the test's clock: 2 ms here, on
    // Redis's clock, for an entry that counts 2 ms more on the test's. A little real time later the
    // log was gone and the next request admitted: how "window edges" failed now and then under load.
    let now = NOON;
    const store = storeAt(() => now);
    const caller = randomUUID();
    expect((await store.hit(caller, oneAMinute)).kind).toBe('admitted');
    now += 59_998;
    expect((await store.hit(caller, oneAMinute)).kind).toBe('rate-limited');
    await new Promise((resolve) => setTimeout(resolve, 20));
    now += 1;
    expect((await store.hit(caller, oneAMinute)).kind).toBe('rate-limited');
    now += 1;
    expect((await store.hit(caller, oneAMinute)).kind).toBe('admitted');
    await store.close();
  });

  /**
   * A caller's state as the scripts before the packed one kept it: a hash of the
   * same fields, without `omit` (nor mhead: their list's head was the oldest pair).
   */
  async function asHash(key: string, omit: readonly string[] = []): Promise<void> {
    const state = readLimiterState((await admin.getBuffer(key))!);
    expect(state.mhead).toBe(0);
    const ttl = await admin.pttl(key);
    const fields = Object.entries(state).filter(([field]) => field !== 'mhead' && !omit.includes(field));
    await admin.del(key);
    await admin.hset(key, Object.fromEntries(fields));
    await admin.pexpire(key, ttl);
  }

  it('carries over a state kept as a hash by the scripts before the packed one (an upgrade)', async () => {
    let now = NOON;
    const store = storeAt(() => now);
    const caller = randomUUID();
    const free: Policy = { name: 'free', perMinute: 60, perDay: 100 };
    for (let i = 0; i < 59; i++) expect((await store.hit(caller, free)).kind).toBe('admitted');
    await asHash(limiterKeys(prefix, caller)[2]);
    const last = await store.hit(caller, free);
    expect(last).toMatchObject({ kind: 'admitted', minute: { remaining: 0 }, day: { remaining: 40 } });
    expect(await admin.type(limiterKeys(prefix, caller)[2])).toBe('string');
    expect((await store.hit(caller, free)).kind).toBe('rate-limited');
    now += 60_000;
    expect(await store.hit(caller, free)).toMatchObject({ kind: 'admitted', day: { remaining: 39 } });
    await store.close();
  });

  it('counts the rejections of a state written before it kept their end (a rolling deploy)', async () => {
    let now = NOON;
    const store = storeAt(() => now);
    const caller = randomUUID();
    const [, rejections, state] = limiterKeys(prefix, caller);
    const refuse = () => store.refuse(caller, oneAMinute);
    // Sent at once: the first follows no other, the next nine come within its wait and count.
    for (let i = 0; i < 10; i++) await refuse();
    // As the script before the field left it: the rejections in their list, nothing of them in the hash.
    await asHash(state, ['rejEnd', 'exp']);
    expect(await admin.llen(rejections)).toBe(9);
    now += 60_000;
    // All nine have left the window: one more counted refusal is the first of a new count, not the tenth.
    await refuse();
    expect((await store.refuse(caller, oneAMinute)).kind).toBe('rate-limited');
    expect(await store.banOf(caller)).toBeNull();
    expect(await admin.llen(rejections)).toBe(1);
    for (let i = 0; i < 8; i++) await refuse();
    await asHash(state, ['rejEnd', 'exp']);
    await refuse();
    expect(await store.banOf(caller)).not.toBeNull();
    await store.close();
  });

  it('forgets a caller when its state is as good as none, and never writes on a peek', async () => {
    const store = storeAt(undefined, { ...DEFAULT_BAN_RULES, withinMs: 300 });
    const caller = randomUUID();
    await store.peek(caller, oneAMinute, 5);
    expect(await admin.exists(...limiterKeys(prefix, caller))).toBe(0);
    // Nothing fits: the first refusal keeps only its wait (1 s), in the state; the second, sent within
    // it, a rejection (300 ms). Both go once the wait has passed.
    await store.hit(caller, { ...oneAMinute, perMinute: 0 });
    expect(await admin.exists(...limiterKeys(prefix, caller))).toBe(1);
    await store.hit(caller, { ...oneAMinute, perMinute: 0 });
    expect(await admin.exists(...limiterKeys(prefix, caller))).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await admin.exists(...limiterKeys(prefix, caller))).toBe(0);
    await store.close();
  });

  it('admits exactly 60 of 500 concurrent requests of a free caller sent through several clients', async () => {
    const stores = Array.from({ length: 5 }, () => storeAt());
    const free: Policy = { name: 'free', perMinute: 60, perDay: 1000 };
    const caller = randomUUID();
    const verdicts = await Promise.all(
      Array.from({ length: 500 }, (_, i) => stores[i % stores.length]!.hit(caller, free)),
    );
    expect(verdicts.filter((v) => v.kind === 'admitted')).toHaveLength(60);
    // The minute log: one pair (instant, running count before it)
    // per millisecond, the count after the newest in the state.
    const [log, , key] = limiterKeys(prefix, caller);
    const pairs = (await admin.lrange(log, 0, -1)).map(Number);
    const state = readLimiterState((await admin.getBuffer(key))!);
    expect(pairs.length % 2).toBe(0);
    expect(pairs[1]).toBe(state.mbase);
    expect(state.mtot - state.mbase).toBe(60);
    expect(state.count).toBe(60);
    await Promise.all(stores.map((s) => s.close()));
  });

  it('decides the calls of one turn in few script runs, each exactly as if it came alone', async () => {
    const rules = { rejections: 3, withinMs: 10_000, firstBanMs: 5_000, maxBanMs: 20_000, escalationWindowMs: 60_000 };
    const client = new Redis(url);
    const runs = vi.spyOn(client, 'evalsha');
    const redisStore = new RedisLimiterStore(client, { clock: () => NOON, rules, prefix });
    const memory = new MemoryLimiterStore({ clock: () => NOON, rules });
    const policy: Policy = { name: 'free', perMinute: 4, perDay: 100 };
    const callers = [randomUUID(), randomUUID(), randomUUID()];
    // 40 calls in one turn: admissions, refusals, a ban starting, peeks and a ban's look, over three callers.
    const calls = Array.from({ length: 40 }, (_, i) => {
      const caller = callers[i % 3]!;
      return (store: LimiterStore) =>
        i % 7 === 6 ? store.peek(caller, policy) : i % 11 === 10 ? store.banOf(caller) : store.hit(caller, policy);
    });
    try {
      const fromRedis = await Promise.all(calls.map((call) => call(redisStore)));
      const alone = [];
      for (const call of calls) alone.push(await call(memory));
      expect(fromRedis.map(unstamped)).toEqual(alone);
      expect(alone.some((verdict) => verdict !== null && 'kind' in verdict && verdict.kind === 'banned')).toBe(true);
      expect(runs).toHaveBeenCalledTimes(Math.ceil(calls.length / MAX_CALLS_PER_RUN));
    } finally {
      await Promise.all([redisStore.close(), memory.close()]);
    }
  });

  it('sends the script whole when Redis has forgotten it, for a whole run of calls', async () => {
    const store = storeAt(() => NOON);
    const caller = randomUUID();
    try {
      await store.hit(caller, oneAMinute);
      // As after a restart of a Redis that keeps nothing: EVALSHA meets NOSCRIPT.
      await admin.script('FLUSH');
      const verdicts = await Promise.all([1, 2, 3].map(() => store.hit(caller, oneAMinute)));
      expect(verdicts.map((verdict) => verdict.kind)).toEqual(['rate-limited', 'rate-limited', 'rate-limited']);
      // The first of the three follows no other 429; the other two count.
      expect(await admin.llen(limiterKeys(prefix, caller)[1])).toBe(2);
    } finally {
      await store.close();
    }
  });

  /** PTTL counts down in real time while the test runs, so a second of slack; -2 is a missing key. */
  function expectTtls(actual: number[], expected: number[]): void {
    expected.forEach((want, i) => {
      const ttl = actual[i]!;
      if (want < 0) expect(ttl, `key ${i}`).toBe(want);
      else expect(want - ttl, `key ${i}: ${ttl} ms left, ${want} expected`).toBeGreaterThanOrEqual(0);
      if (want >= 0) expect(want - ttl, `key ${i}: ${ttl} ms left, ${want} expected`).toBeLessThan(1000);
    });
  }

  async function scanAll(pattern: string): Promise<string[]> {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
    return found;
  }

  async function redisNow(): Promise<number> {
    const [seconds, micros] = await admin.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }
});
