import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { expectProblem, firstPetWith, type Order, ordersAs } from '../helpers/orders.js';

/**
 * `POST /store/orders/{orderId}/advance`: a test key moves its own order one step at once (docs/orders-and-events.md).
 */

let t: TestApp;
let test: string;
let live: string;
let available: number;

const advance = (key: string, id: number | string, idempotencyKey?: string) =>
  t.app.inject({
    method: 'POST',
    url: `/store/orders/${id}/advance`,
    headers: { 'x-api-key': key, ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) },
  });
const place = async (key: string) => json<Order>(await ordersAs(t, key).post({ petId: available, quantity: 2 }));

beforeAll(async () => {
  t = await testApp();
  test = await t.newKey({ plan: 'business', test: true });
  live = await t.newKey('business');
  available = await firstPetWith(t, live, 'available');
});
afterAll(async () => {
  await t.close();
});

describe('POST /store/orders/{orderId}/advance', () => {
  it('moves a test key’s order placed → approved → delivered, one step a call, with an event each', async () => {
    const order = await place(test);
    const approved = await advance(test, order.id);
    expect(approved.statusCode).toBe(200);
    expect(json(approved)).toEqual({ ...order, status: 'approved' });
    expect(approved.headers['idempotent-replayed']).toBeUndefined();
    expect(json(await advance(test, order.id))).toEqual({ ...order, status: 'delivered' });
    expect(json(await ordersAs(t, test).get(`/store/orders/${order.id}`))).toEqual({ ...order, status: 'delivered' });
    const events = await eventsOf(t, test, `orderId=${order.id}`);
    expect(events.map((e) => [e.type, e.livemode])).toEqual([
      ['order.delivered', false],
      ['order.approved', false],
      ['order.placed', false],
    ]);
  });

  it('answers 409 order-not-advanceable for a delivered or cancelled order, and writes nothing', async () => {
    const delivered = await place(test);
    await advance(test, delivered.id);
    await advance(test, delivered.id);
    const cancelled = await place(test);
    await ordersAs(t, test).del(`/store/orders/${cancelled.id}`);
    const before = await eventsOf(t, test);
    for (const order of [delivered, cancelled])
      expectProblem(await advance(test, order.id), 409, 'order-not-advanceable');
    expect(await eventsOf(t, test)).toEqual(before);
  });

  it('answers 403 test-key-required to a live key, whatever the order, and moves nothing', async () => {
    const order = await place(live);
    expectProblem(await advance(live, order.id), 403, 'test-key-required');
    expectProblem(await advance(live, 999_999), 403, 'test-key-required');
    expect(json<Order>(await ordersAs(t, live).get(`/store/orders/${order.id}`)).status).toBe('placed');
  });

  it('answers 404 for an order the key does not have, and 400 for an id that is not one', async () => {
    const other = await t.newKey({ plan: 'business', test: true });
    const order = await place(other);
    expectProblem(await advance(test, order.id), 404, 'not-found');
    expect(json<Order>(await ordersAs(t, other).get(`/store/orders/${order.id}`)).status).toBe('placed');
    expectProblem(await advance(test, 999_999), 404, 'not-found');
    expectProblem(await advance(test, 'abc'), 400, 'invalid-request');
  });

  it('honours Idempotency-Key: a retry replays the answer and moves nothing; the key on another order is a 422', async () => {
    const order = await place(test);
    const first = await advance(test, order.id, 'advance-once');
    expect(json(first).status).toBe('approved');
    const replay = await advance(test, order.id, 'advance-once');
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json(replay)).toEqual(json(first));
    expect(json<Order>(await ordersAs(t, test).get(`/store/orders/${order.id}`)).status).toBe('approved');
    expect((await eventsOf(t, test, `orderId=${order.id}`)).map((e) => e.type)).toEqual([
      'order.approved',
      'order.placed',
    ]);

    const another = await place(test);
    expectProblem(await advance(test, another.id, 'advance-once'), 422, 'idempotency-key-reused');
    expect(json<Order>(await ordersAs(t, test).get(`/store/orders/${another.id}`)).status).toBe('placed');
    // The same key on another operation is another request too.
    const post = await t.app.inject({
      method: 'POST',
      url: '/store/orders',
      headers: { 'x-api-key': test, 'idempotency-key': 'advance-once' },
      payload: { petId: available, quantity: 1 },
    });
    expectProblem(post, 422, 'idempotency-key-reused');
  });

  it('remembers no refusal: a key that got a 409 moves the order once it can', async () => {
    const order = await place(test);
    await advance(test, order.id);
    await advance(test, order.id);
    expectProblem(await advance(test, order.id, 'late'), 409, 'order-not-advanceable');
    const fresh = await place(test);
    const moved = await advance(test, fresh.id, 'late');
    expect(moved.statusCode).toBe(200);
    expect(json<Order>(moved).status).toBe('approved');
  });
});
