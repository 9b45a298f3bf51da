import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BAN_RULES } from '../../src/ratelimit/decision.js';
import type { Policy } from '../../src/ratelimit/plans.js';
import { STAMP_TTL_MS } from '../../src/ratelimit/redis-stamp.js';
import { limiterKeys, RedisLimiterStore } from '../../src/ratelimit/redis-store.js';
import { redisForTests, unlinkAll } from '../helpers/redis.js';

/**
 * What the Redis store keeps of a caller beyond its windows: its
 * stamp (orders/order-pages.ts), a test key's clock, and a reset.
 */

const redis = await redisForTests();
const url = redis?.url ?? '';
const prefix = `test:${randomUUID()}:`;

describe.skipIf(!redis)('RedisLimiterStore, for stamps and test keys', () => {
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(url);
  });
  afterAll(async () => {
    await unlinkAll(admin, prefix);
    await admin.quit();
  });

  const storeAt = (clock?: () => number, rules = DEFAULT_BAN_RULES) =>
    new RedisLimiterStore(new Redis(url), { clock, rules, prefix });

  it("carries each caller's stamp on its admissions and peeks, the same on every instance until a restamp gives a new one", async () => {
    const [one, two] = [storeAt(), storeAt()];
    const [caller, other] = [randomUUID(), randomUUID()];
    const free: Policy = { name: 'free', perMinute: 60, perDay: 1000 };
    try {
      // A peek never writes: a caller without a stamp peeks none.
      expect((await one.peek(caller, free)).stamp).toBeUndefined();
      const first = (await one.hit(caller, free)).stamp;
      expect(first).toMatch(/^t\d+\.\d+$/);
      expect((await two.hit(caller, free)).stamp).toBe(first);
      expect((await two.peek(caller, free)).stamp).toBe(first);
      const untouched = (await one.hit(other, free)).stamp;
      // Restamps of one turn, one caller twice: one new stamp, random.
      await Promise.all([one.restamp([caller]), one.restamp([caller])]);
      const second = (await two.hit(caller, free)).stamp;
      expect(second).not.toBe(first);
      expect(second).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect((await one.peek(caller, free)).stamp).toBe(second);
      expect((await two.hit(other, free)).stamp).toBe(untouched);
      // A refusal carries none: it shows nothing memory holds.
      expect((await one.hit(caller, { ...free, perMinute: 0 })).stamp).toBeUndefined();
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('makes a stamp no earlier one can equal when the caller has none (expired, or a Redis that lost its data)', async () => {
    const store = storeAt();
    const caller = randomUUID();
    const free: Policy = { name: 'free', perMinute: 60, perDay: 1000 };
    try {
      await store.restamp([caller]);
      const seen = new Set([(await store.hit(caller, free)).stamp]);
      for (let i = 0; i < 5; i++) {
        await admin.del(limiterKeys(prefix, caller)[3]);
        seen.add((await store.hit(caller, free)).stamp);
      }
      expect(seen.size).toBe(6);
      expect(await admin.pttl(limiterKeys(prefix, caller)[3])).toBeGreaterThan(STAMP_TTL_MS - 60_000);
    } finally {
      await store.close();
    }
  });

  it("decides a test key's calls in its own time: Redis's clock moved by the key's offset, or where its frozen clock stands", async () => {
    const store = storeAt();
    const free: Policy = { name: 'free', perMinute: 2, perDay: 1000 };
    const year = 365 * 86_400_000;
    try {
      const ahead = randomUUID();
      const before = Date.now();
      const moved = await store.hit(ahead, free, 0, { offsetMs: year, frozenAt: null });
      expect(moved.at).toBeGreaterThanOrEqual(before + year - 1_000);
      expect(moved.at).toBeLessThanOrEqual(Date.now() + year + 1_000);
      expect(moved.day.resetAt).toBe((Math.floor(moved.at / 86_400_000) + 1) * 86_400_000);
      // Its windows live on Redis's clock for as long as they last in the key's time.
      const ttl = await admin.pttl(limiterKeys(prefix, ahead)[2]);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(moved.day.resetAt - moved.at + 1_000);

      const still = randomUUID();
      const frozenAt = Date.UTC(2027, 6, 1, 12);
      const frozen = { offsetMs: 0, frozenAt };
      expect((await store.hit(still, free, 0, frozen)).at).toBe(frozenAt);
      await store.hit(still, free, 0, frozen);
      const refused = await store.hit(still, free, 0, frozen);
      expect(refused).toMatchObject({ kind: 'rate-limited', at: frozenAt, retryAfterSeconds: 60 });
      expect((await store.hit(still, free, 0, { offsetMs: 0, frozenAt: frozenAt + 60_000 })).kind).toBe('admitted');
      expect((await store.peek(still, free, 0, { offsetMs: 0, frozenAt: frozenAt + 60_000 })).at).toBe(
        frozenAt + 60_000,
      );
    } finally {
      await store.close();
    }
  });

  it('forgets everything of a caller: its windows, its ban and the history that doubles bans', async () => {
    const store = storeAt(undefined, { ...DEFAULT_BAN_RULES, rejections: 2 });
    const caller = randomUUID();
    const free: Policy = { name: 'free', perMinute: 1, perDay: 1000 };
    try {
      for (let i = 0; i < 4; i++) await store.hit(caller, free);
      expect(await store.banOf(caller)).toMatchObject({ level: 1 });
      await store.forget(caller);
      expect(await store.banOf(caller)).toBeNull();
      expect((await store.hit(caller, free)).kind).toBe('admitted');
      // A new caller's: its minute log and state, no rejections.
      const [log, rejections, state] = limiterKeys(prefix, caller);
      expect([await admin.exists(log), await admin.exists(rejections), await admin.exists(state)]).toEqual([1, 0, 1]);
    } finally {
      await store.close();
    }
  });
});
