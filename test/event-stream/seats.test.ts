import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { MemorySeats, RedisSeats, SEAT_LEASE_MS, type StreamSeats } from '../../src/event-stream/seats.js';
import { redisForTests } from '../helpers/redis.js';

/** Each key's open streams, counted in memory and in Redis (src/event-stream/seats.ts): the allowance holds. */

const redis = await redisForTests();
const prefix = `test:${randomUUID()}:`;
let now = Date.parse('2026-11-29T12:00:00.000Z');
const opened: RedisSeats[] = [];

afterAll(async () => {
  if (!redis) return;
  const admin = new Redis(redis.url);
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.unlink(...keys);
  await admin.quit();
  await Promise.all(opened.map((seats) => seats.close()));
});

const stores: [string, () => StreamSeats][] = [['memory', () => new MemorySeats()]];
if (redis)
  stores.push([
    'Redis',
    () => {
      const seats = new RedisSeats(new Redis(redis.url), prefix, () => now);
      opened.push(seats);
      return seats;
    },
  ]);

describe.each(stores)('seats in %s', (_name, make) => {
  it('are five at most per key: the sixth is refused, another key is not, a seat given back is free again', async () => {
    const seats = make();
    const key = `key_${randomUUID()}`;
    for (let i = 0; i < 5; i++) expect(await seats.take(key, `s${i}`, 5)).toBe(true);
    expect(await seats.take(key, 's5', 5)).toBe(false);
    expect(await seats.take(`key_${randomUUID()}`, 's0', 5)).toBe(true);
    await seats.give(key, 's2');
    expect(await seats.take(key, 's6', 5)).toBe(true);
    expect(await seats.take(key, 's7', 5)).toBe(false);
  });

  it('shared by two instances, count as one', async () => {
    const [a, b] = [make(), make()];
    const key = `key_${randomUUID()}`;
    const taken = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).take(key, `s${i}`, 5)));
    // Memory seats are each instance's own: only Redis is shared.
    if (a instanceof RedisSeats) expect(taken.filter(Boolean)).toHaveLength(5);
  });
});

describe.skipIf(!redis)('seats in Redis', () => {
  it('lapse when their instance stops renewing them, and last while it renews', async () => {
    const seats = new RedisSeats(new Redis(redis!.url), prefix, () => now);
    opened.push(seats);
    const key = `key_${randomUUID()}`;
    for (let i = 0; i < 5; i++) await seats.take(key, `s${i}`, 5);
    now += SEAT_LEASE_MS - 1;
    await seats.renew([0, 1, 2].map((i) => ({ keyId: key, stream: `s${i}` })));
    expect(await seats.take(key, 'late', 5)).toBe(false);
    now += 2;
    // s3 and s4 lapsed; s0–s2 were renewed.
    expect(await seats.take(key, 'n1', 5)).toBe(true);
    expect(await seats.take(key, 'n2', 5)).toBe(true);
    expect(await seats.take(key, 'n3', 5)).toBe(false);
  });
});
