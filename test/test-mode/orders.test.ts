import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { expectProblem, firstPetWith, type Order, ordersAs } from '../helpers/orders.js';

/**
 * A test key's orders, their events and its Idempotency-Keys
 * follow its clock (docs/testing-clients.md#testing-your-client-in-seconds).
 */

let t: TestApp;
let available: number;
beforeAll(async () => {
  t = await testApp();
  available = await firstPetWith(t, await t.newKey('pro'), 'available');
});
afterAll(async () => {
  await t.close();
});

const as = (key: string, extra: Record<string, string> = {}) => ({ 'x-api-key': key, ...extra });
const move = (key: string, how: 'advance' | 'freeze' | 'resume', payload?: object) =>
  t.request({ method: 'POST', url: `/test-clock/${how}`, headers: as(key), ...(payload ? { payload } : {}) });
const place = async (key: string, extra: Record<string, string> = {}, payload: object = { petId: available }) => {
  const answer = await t.request({ method: 'POST', url: '/store/orders', headers: as(key, extra), payload });
  expect(answer.statusCode).toBe(201);
  return json<Order>(answer);
};
const keyNow = async (key: string) =>
  Date.parse(json<{ now: string }>(await t.request({ url: '/test-clock', headers: as(key) })).now);
const at = (ms: number) => new Date(ms).toISOString();

describe("a test key's orders follow its clock", () => {
  it('an order placed and advanced 70 s is delivered before the answer, its events at the instants they fell due in the key’s time, in order', async () => {
    const key = await t.newKey({ plan: 'pro', test: true });
    await move(key, 'freeze');
    await move(key, 'advance', { seconds: 86_400 });
    const placedAt = await keyNow(key);
    const order = await place(key);
    expect((await move(key, 'advance', { seconds: 70 })).statusCode).toBe(200);
    expect(json<Order>(await ordersAs(t, key).get(`/store/orders/${order.id}`)).status).toBe('delivered');
    const events = (await eventsOf(t, key)).reverse();
    expect(events.map((e) => [e.type, e.timestamp])).toEqual([
      ['order.placed', at(placedAt)],
      ['order.approved', at(placedAt + 10_000)],
      ['order.delivered', at(placedAt + 70_000)],
    ]);
  });

  it('many orders placed at different instants move in the order they fell due, across steps, when a year passes at once', async () => {
    const key = await t.newKey({ plan: 'pro', test: true });
    await move(key, 'freeze');
    for (let i = 0; i < 6; i++) {
      await place(key);
      await move(key, 'advance', { seconds: 25 });
    }
    await move(key, 'advance', { seconds: 365 * 86_400 });
    const events = (await eventsOf(t, key)).reverse();
    expect(events).toHaveLength(18);
    const times = events.map((e) => Date.parse(e.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Each order's own: placed, then approved 10 s later, delivered 60 s after that.
    for (const order of new Set(events.map((e) => e.data.id))) {
      const its = events.filter((e) => e.data.id === order);
      expect(its.map((e) => e.type)).toEqual(['order.placed', 'order.approved', 'order.delivered']);
      expect(Date.parse(its[2]!.timestamp) - Date.parse(its[0]!.timestamp)).toBe(70_000);
    }
    expect(
      json<{ data: Order[] }>(await ordersAs(t, key).get('/store/orders?limit=100')).data.every(
        (o) => o.status === 'delivered',
      ),
    ).toBe(true);
  });

  it("moves a running clock's orders by itself, in its time, as the real time passes; a live key's as ever", async () => {
    const [key, live] = [await t.newKey({ plan: 'pro', test: true }), await t.newKey('pro')];
    await move(key, 'advance', { seconds: 3_600 });
    const order = await place(key);
    const liveOrder = await place(live);
    const placedAt = Date.parse((await eventsOf(t, key))[0]!.timestamp);
    t.clock.advance(10_000);
    await t.fulfilment.runDue();
    expect(json<Order>(await ordersAs(t, key).get(`/store/orders/${order.id}`)).status).toBe('approved');
    expect(json<Order>(await ordersAs(t, live).get(`/store/orders/${liveOrder.id}`)).status).toBe('approved');
    expect(Date.parse((await eventsOf(t, key))[0]!.timestamp)).toBe(placedAt + 10_000);
    // The live key's events are in the real time.
    expect(Date.parse((await eventsOf(t, live))[0]!.timestamp)).toBe(t.clock());
  });

  it("a frozen clock's orders move only as it is advanced", async () => {
    const key = await t.newKey({ plan: 'pro', test: true });
    await move(key, 'freeze');
    const order = await place(key);
    t.clock.advance(3_600_000);
    await t.fulfilment.runDue();
    expect(json<Order>(await ordersAs(t, key).get(`/store/orders/${order.id}`)).status).toBe('placed');
    await move(key, 'advance', { seconds: 10 });
    expect(json<Order>(await ordersAs(t, key).get(`/store/orders/${order.id}`)).status).toBe('approved');
  });

  it('cancels at the key’s now', async () => {
    const key = await t.newKey({ plan: 'pro', test: true });
    await move(key, 'freeze');
    await move(key, 'advance', { seconds: 7 * 86_400 });
    const order = await place(key);
    expect((await ordersAs(t, key).del(`/store/orders/${order.id}`)).statusCode).toBe(200);
    expect((await eventsOf(t, key))[0]).toMatchObject({ type: 'order.cancelled', timestamp: at(await keyNow(key)) });
  });
});

describe("a test key's Idempotency-Keys follow its clock", () => {
  it('a key sent again is replayed within 24 h of the key’s time and a new request after', async () => {
    const key = await t.newKey({ plan: 'pro', test: true });
    await move(key, 'freeze');
    const first = await place(key, { 'idempotency-key': 'day' });
    await move(key, 'advance', { seconds: 86_399 });
    const replay = await t.request({
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'idempotency-key': 'day' }),
      payload: { petId: available },
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json<Order>(replay).id).toBe(first.id);
    expectProblem(
      await t.request({
        method: 'POST',
        url: '/store/orders',
        headers: as(key, { 'idempotency-key': 'day' }),
        payload: { petId: available, quantity: 2 },
      }),
      422,
      'idempotency-key-reused',
    );
    await move(key, 'advance', { seconds: 1 });
    const fresh = await place(key, { 'idempotency-key': 'day' }, { petId: available, quantity: 2 });
    expect(fresh.id).not.toBe(first.id);
    // The real time's sweep leaves a moved clock's records to it.
    t.clock.advance(2 * 86_400_000);
    await t.idempotencyExpiry.sweep();
    const again = await t.request({
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'idempotency-key': 'day' }),
      payload: { petId: available, quantity: 2 },
    });
    expect(again.headers['idempotent-replayed']).toBe('true');
  });
});
