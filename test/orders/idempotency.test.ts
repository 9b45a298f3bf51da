import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyExpiry } from '../../src/idempotency/expiry.js';
import { IdempotentWrites } from '../../src/idempotency/writes.js';
import { OrderMoves } from '../../src/orders/moves.js';
import { OrderPlacement } from '../../src/orders/placement.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

interface Order {
  id: number;
  petId: number;
  quantity: number;
  status: string;
}

const BASE = 'http://petstore.test';
const DAY_MS = 24 * 60 * 60 * 1000;

let t: TestApp;
let available: number;
let pending: number;

/**
 * POST /store/orders with a raw JSON text, so that the exact bytes
 * are under the test's control; to `t` unless another app is named.
 */
function post(
  key: string,
  idempotencyKey: string | undefined,
  body: string,
  app = t.app,
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { 'x-api-key': key, 'content-type': 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  return app.inject({ method: 'POST', url: '/store/orders', headers, payload: body });
}

async function ordersOf(key: string): Promise<Order[]> {
  const response = await t.app.inject({ method: 'GET', url: '/store/orders?limit=100', headers: { 'x-api-key': key } });
  expect(response.statusCode).toBe(200);
  return json<{ data: Order[] }>(response).data;
}

async function firstPetWith(key: string, status: string): Promise<number> {
  const response = await t.app.inject({
    method: 'GET',
    url: `/pets?status=${status}&limit=1`,
    headers: { 'x-api-key': key },
  });
  return json<{ data: Array<{ id: number }> }>(response).data[0]!.id;
}

beforeAll(async () => {
  t = await testApp();
  const key = await t.newKey('business');
  available = await firstPetWith(key, 'available');
  pending = await firstPetWith(key, 'pending');
});
afterAll(async () => {
  await t.close();
});

describe('POST /store/orders with Idempotency-Key', () => {
  it('replays the original 201 for the same key and body, and places one order only', async () => {
    const key = await t.newKey('business');
    const body = JSON.stringify({ petId: available, quantity: 2 });
    const first = await post(key, 'order-1', body);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const replay = await post(key, 'order-1', body);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json(replay)).toEqual(json(first));
    expect(replay.headers.location).toBe(first.headers.location);
    expect((await ordersOf(key)).map((o) => o.id)).toEqual([json<Order>(first).id]);
  });

  it('replays the original response even after the order was cancelled (same order, same status)', async () => {
    const key = await t.newKey('business');
    const body = JSON.stringify({ petId: available, quantity: 1 });
    const first = json<Order>(await post(key, 'then-cancel', body));
    await t.app.inject({ method: 'DELETE', url: `/store/orders/${first.id}`, headers: { 'x-api-key': key } });
    const replay = await post(key, 'then-cancel', body);
    expect(replay.statusCode).toBe(201);
    expect(json<Order>(replay)).toEqual(first);
  });

  it('takes member order and white space as the same body', async () => {
    const key = await t.newKey('business');
    const first = await post(key, 'same-meaning', `{"petId":${available},"quantity":3}`);
    expect(first.statusCode).toBe(201);
    const replay = await post(key, 'same-meaning', `{\n  "quantity" : 3 ,\n\t"petId":   ${available}\n}\n`);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json<Order>(replay).id).toBe(json<Order>(first).id);
    expect(await ordersOf(key)).toHaveLength(1);
  });

  it('refuses the same key with another body: 422 idempotency-key-reused, nothing placed', async () => {
    const key = await t.newKey('business');
    expect((await post(key, 'reused', JSON.stringify({ petId: available, quantity: 1 }))).statusCode).toBe(201);
    const response = await post(key, 'reused', JSON.stringify({ petId: available, quantity: 2 }));
    expect(response.statusCode).toBe(422);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(json(response)).toMatchObject({
      type: `${BASE}/problems/idempotency-key-reused`,
      status: 422,
      instance: '/store/orders',
    });
    expect(await ordersOf(key)).toHaveLength(1);
  });

  it('keeps the idempotency keys of two API keys apart', async () => {
    const one = await t.newKey('business');
    const two = await t.newKey('business');
    const a = await post(one, 'shared-name', JSON.stringify({ petId: available, quantity: 1 }));
    const b = await post(two, 'shared-name', JSON.stringify({ petId: available, quantity: 5 }));
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(json<Order>(b).id).not.toBe(json<Order>(a).id);
    expect(json<Order>(b).quantity).toBe(5);
    expect((await ordersOf(one)).map((o) => o.id)).toEqual([json<Order>(a).id]);
    expect((await ordersOf(two)).map((o) => o.id)).toEqual([json<Order>(b).id]);
  });

  it('still remembers the key just before 24 hours have passed', async () => {
    const key = await t.newKey('business');
    expect((await post(key, 'almost-a-day', JSON.stringify({ petId: available, quantity: 1 }))).statusCode).toBe(201);
    t.clock.advance(DAY_MS - 1);
    const response = await post(key, 'almost-a-day', JSON.stringify({ petId: available, quantity: 2 }));
    expect(response.statusCode).toBe(422);
  });

  it('forgets the key after 24 hours: another body places a new order', async () => {
    const key = await t.newKey('business');
    const first = await post(key, 'a-day-later', JSON.stringify({ petId: available, quantity: 1 }));
    expect(first.statusCode).toBe(201);
    t.clock.advance(DAY_MS + 1);
    const second = await post(key, 'a-day-later', JSON.stringify({ petId: available, quantity: 2 }));
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(json<Order>(second).id).not.toBe(json<Order>(first).id);
    expect(json<Order>(second).quantity).toBe(2);
    // And from then on the key replays the new order.
    const replay = await post(key, 'a-day-later', JSON.stringify({ petId: available, quantity: 2 }));
    expect(json<Order>(replay).id).toBe(json<Order>(second).id);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('places one order when the same request arrives several times at once; the others get 201 replays or 409s', async () => {
    const key = await t.newKey('business');
    const body = JSON.stringify({ petId: available, quantity: 1 });
    const responses = await Promise.all([1, 2, 3, 4].map(() => post(key, 'at-once', body)));
    // A retry while the original is in progress gets 409 (docs/calling-the-api.md#idempotency-key); one that
    // comes once it is done gets its replay.
    const placed = responses.filter((r) => r.statusCode === 201);
    expect(placed.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(placed.map((r) => json<Order>(r).id)).size).toBe(1);
    for (const other of responses.filter((r) => r.statusCode !== 201)) {
      expect(other.statusCode).toBe(409);
      expect(json(other)).toMatchObject({ type: `${BASE}/problems/idempotency-key-in-progress` });
    }
    expect(await ordersOf(key)).toHaveLength(1);
    const retried = await post(key, 'at-once', body);
    expect(retried.statusCode).toBe(201);
    expect(json<Order>(retried).id).toBe(json<Order>(placed[0]!).id);
  });

  it('does not remember a 409 (pet not available)', async () => {
    const key = await t.newKey('business');
    const refused = await post(key, 'after-409', JSON.stringify({ petId: pending, quantity: 1 }));
    expect(refused.statusCode).toBe(409);
    const placed = await post(key, 'after-409', JSON.stringify({ petId: available, quantity: 1 }));
    expect(placed.statusCode).toBe(201);
    expect(placed.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not remember a 400 either', async () => {
    const key = await t.newKey('business');
    expect((await post(key, 'after-400', JSON.stringify({ petId: available, quantity: 0 }))).statusCode).toBe(400);
    expect((await post(key, 'after-400', JSON.stringify({ petId: available, quantity: 1 }))).statusCode).toBe(201);
  });

  it.each([
    ['empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['with a space', 'two words'],
  ])('refuses an Idempotency-Key that is %s: 400 naming the header', async (_name, value) => {
    const key = await t.newKey('business');
    const response = await post(key, value, JSON.stringify({ petId: available, quantity: 1 }));
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toContain('application/problem+json');
    const body = json<{ type: string; errors: Array<{ in: string; name: string }> }>(response);
    expect(body.type).toBe(`${BASE}/problems/invalid-request`);
    // One input that breaks several rules is one entry, naming the header.
    expect(body.errors.map((e) => `${e.in} ${e.name}`)).toEqual(['header idempotency-key']);
    expect(await ordersOf(key)).toEqual([]);
  });

  it('takes the Structured Field string form as the same key as the bare token', async () => {
    const key = await t.newKey('business');
    const body = JSON.stringify({ petId: available, quantity: 1 });
    const first = await post(key, '"sf-key-1"', body);
    expect(first.statusCode).toBe(201);
    const again = await post(key, 'sf-key-1', body);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(json<Order>(again).id).toBe(json<Order>(first).id);
    // Inside a string: spaces, and escaped quotes and backslashes.
    const spaced = await post(key, '"two words"', body);
    expect(spaced.statusCode).toBe(201);
    const escaped = await post(key, '"a\\"b\\\\c"', body);
    expect(escaped.statusCode).toBe(201);
    expect(json<Order>(await post(key, 'a"b\\c', body)).id).toBe(json<Order>(escaped).id);
    for (const broken of ['"unterminated', '""', '"a"b"', '"tab\there"']) {
      expect((await post(key, broken, body)).statusCode, broken).toBe(400);
    }
    expect(await ordersOf(key)).toHaveLength(3);
  });

  it('answers a retry while the original is still being placed with 409, then replays it', async () => {
    const { record } = await t.keys.create({ plan: 'business' });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const pet = json<{ id: number }>(
      await t.app.inject({ url: `/pets/${available}`, headers: { 'x-api-key': await t.newKey('pro') } }),
    );
    // A catalogue that answers only when the test says so: the original request stays in progress.
    const moves = OrderMoves.of(t.db, t.config.fulfilment, t.changes, t.metrics, async () => {});
    const placement = new OrderPlacement(new IdempotentWrites(t.db, t.clock), moves, t.clock, {
      find: async () => {
        await held;
        return pet as never;
      },
    });
    const input = { petId: available, quantity: 1 };
    const original = placement.place(record, input, 'in-progress-1');
    await expect(placement.place(record, input, 'in-progress-1')).rejects.toMatchObject({
      slug: 'idempotency-key-in-progress',
      status: 409,
    });
    release();
    const placed = await original;
    expect(placed.replayed).toBe(false);
    const replay = await placement.place(record, input, 'in-progress-1');
    expect(replay).toEqual({ order: placed.order, replayed: true });
  });

  it('accepts an Idempotency-Key of exactly 255 visible characters', async () => {
    const key = await t.newKey('business');
    const response = await post(key, 'k'.repeat(255), JSON.stringify({ petId: available, quantity: 1 }));
    expect(response.statusCode).toBe(201);
  });
});

describe('Idempotency-Key records past the window', () => {
  it('are deleted oldest first, in slices, once 24 hours have passed, and the rest are kept and still replayed', async () => {
    const own = await testApp();
    try {
      const key = await own.newKey('business');
      const send = (idempotencyKey: string, quantity = 1) =>
        post(key, idempotencyKey, JSON.stringify({ petId: available, quantity }), own.app);
      const remembered = async () =>
        (await own.db.selectFrom('idempotency_records').select('idempotency_key').orderBy('created_at').execute()).map(
          (row) => row.idempotency_key,
        );
      // Five a millisecond apart (old-0 at T … old-4 at T+4), then three half a day later.
      for (let i = 0; i < 5; i++) {
        expect((await send(`old-${i}`)).statusCode).toBe(201);
        own.clock.advance(1);
      }
      own.clock.advance(DAY_MS / 2);
      for (let i = 0; i < 3; i++) expect((await send(`new-${i}`)).statusCode).toBe(201);

      // At T+3 + 24 h: old-0 … old-3 have left the window, old-4 has not.
      own.clock.advance(DAY_MS / 2 - 2);
      const sliced = new IdempotencyExpiry({
        db: own.db,
        clock: own.clock,
        log: { warn: () => {}, info: () => {} },
        pace: { sliceMs: 5, idleShare: 1, busyShare: 1, first: 2, min: 1, max: 2 },
      });
      expect(await sliced.sweep()).toBe(4);
      expect(await remembered()).toEqual(['old-4', 'new-0', 'new-1', 'new-2']);
      // What the window says, unchanged: old-4 with another body is still refused; old-3 is a new request.
      expect((await send('old-4', 2)).statusCode).toBe(422);
      const again = await send('old-3', 2);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect((await send('new-0')).headers['idempotent-replayed']).toBe('true');

      own.clock.advance(1);
      expect(await own.idempotencyExpiry.sweep()).toBe(1);
      expect(await own.idempotencyExpiry.sweep()).toBe(0);
      expect(await remembered()).toEqual(['new-0', 'new-1', 'new-2', 'old-3']);
    } finally {
      await own.close();
    }
  });
});
