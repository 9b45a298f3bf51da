import type { Received } from '../helpers/over-socket.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { BASE, expectProblem, firstPetWith, type Order, ordersAs, type Page } from '../helpers/orders.js';

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

let t: TestApp;
let alice: string;
let available: number;
let pending: number;
let sold: number;

const as = (key: string) => ordersAs(t, key);

function expectInvalidBody(response: Received, names: string[]) {
  expectProblem(response, 400, 'invalid-request');
  const errors = json<{ errors: Array<{ in: string; name: string; message: string }> }>(response).errors;
  expect(errors.every((e) => e.in === 'body' && typeof e.message === 'string')).toBe(true);
  expect(new Set(errors.map((e) => e.name))).toEqual(new Set(names));
}

/** Every order of the key, walking the pages with this limit. */
async function walkOrders(key: string, query: string): Promise<number[]> {
  const ids: number[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const suffix: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const response = await as(key).get(`/store/orders?${query}${suffix}`);
    expect(response.statusCode).toBe(200);
    const page = json<Page<Order>>(response);
    ids.push(...page.data.map((o) => o.id));
    cursor = page.nextCursor;
    if (cursor === null) return ids;
  }
  throw new Error('the pages never ended');
}

beforeAll(async () => {
  t = await testApp();
  alice = await t.newKey('business');
  available = await firstPetWith(t, alice, 'available');
  pending = await firstPetWith(t, alice, 'pending');
  sold = await firstPetWith(t, alice, 'sold');
});
afterAll(async () => {
  await t.close();
});

describe('POST /store/orders', () => {
  it('places an order: 201, the Order, and its Location', async () => {
    const response = await as(alice).post({ petId: available, quantity: 2 });
    expect(response.statusCode).toBe(201);
    const order = json<Order>(response);
    expect(Object.keys(order).sort()).toEqual(['id', 'petId', 'quantity', 'shipDate', 'status']);
    expect(order).toMatchObject({ petId: available, quantity: 2, status: 'placed' });
    expect(Number.isInteger(order.id) && order.id >= 1).toBe(true);
    expect(order.shipDate).toMatch(DATE_TIME);
    expect(response.headers.location).toBe(`${BASE}/store/orders/${order.id}`);

    const read = await as(alice).get(`/store/orders/${order.id}`);
    expect(read.statusCode).toBe(200);
    expect(json(read)).toEqual(order);
  });

  it('keeps a given shipDate (as the same instant)', async () => {
    const response = await as(alice).post({ petId: available, quantity: 1, shipDate: '2026-12-01T10:00:00Z' });
    expect(response.statusCode).toBe(201);
    expect(Date.parse(json<Order>(response).shipDate)).toBe(Date.parse('2026-12-01T10:00:00Z'));
  });

  it('answers 404 problem for an unknown pet', async () => {
    expectProblem(await as(alice).post({ petId: 999999, quantity: 1 }), 404, 'not-found');
  });

  it.each([
    ['pending', () => pending],
    ['sold', () => sold],
  ])('answers 409 problem for a %s pet', async (_status, petId) => {
    expectProblem(await as(alice).post({ petId: petId(), quantity: 1 }), 409, 'pet-not-available');
  });

  it.each([
    ['a missing petId', { quantity: 1 }, ['/petId']],
    ['quantity 0', { petId: 1, quantity: 0 }, ['/quantity']],
    ['quantity as a string (no coercion of bodies)', { petId: 1, quantity: '2' }, ['/quantity']],
    ['an unknown member', { petId: 1, quantity: 1, colour: 'red' }, ['/colour']],
    ['shipDate "tomorrow"', { petId: 1, quantity: 1, shipDate: 'tomorrow' }, ['/shipDate']],
    ['petId as a string', { petId: '1', quantity: 1 }, ['/petId']],
  ])('refuses %s with a 400 naming the member', async (_name, body, names) => {
    expectInvalidBody(await as(alice).post(body), names);
  });

  it('lists every invalid member at once', async () => {
    const response = await as(alice).post({ quantity: '2', shipDate: 'tomorrow', colour: 'red' });
    expectInvalidBody(response, ['/petId', '/quantity', '/shipDate', '/colour']);
  });

  it('places nothing when it refuses', async () => {
    const key = await t.newKey('business');
    await as(key).post({ petId: pending, quantity: 1 });
    await as(key).post({ petId: 1, quantity: 0 });
    expect(json<Page<Order>>(await as(key).get('/store/orders')).data).toEqual([]);
  });
});

describe('GET /store/orders', () => {
  it('walks ~7 orders with limit 2 without skipping or repeating', async () => {
    const erin = await t.newKey('business');
    const placed: number[] = [];
    for (let i = 0; i < 7; i++) placed.push(json<Order>(await as(erin).post({ petId: available, quantity: i + 1 })).id);
    expect(await walkOrders(erin, 'limit=2')).toEqual(placed);
    expect(await walkOrders(erin, 'limit=1')).toEqual(placed);
    expect(await walkOrders(erin, 'limit=7')).toEqual(placed);
  });

  it('filters by status', async () => {
    const frank = await t.newKey('business');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(json<Order>(await as(frank).post({ petId: available, quantity: 1 })).id);
    await as(frank).del(`/store/orders/${ids[1]}`);
    await as(frank).del(`/store/orders/${ids[3]}`);
    expect(await walkOrders(frank, 'status=cancelled&limit=1')).toEqual([ids[1], ids[3]]);
    expect(await walkOrders(frank, 'status=placed&limit=2')).toEqual([ids[0], ids[2], ids[4]]);
    const page = json<Page<Order>>(await as(frank).get('/store/orders?status=cancelled'));
    expect(page.data.every((o) => o.status === 'cancelled')).toBe(true);
  });

  it('refuses an unknown status and a bad limit, naming both', async () => {
    const response = await as(alice).get('/store/orders?status=lost&limit=101');
    expectProblem(response, 400, 'invalid-request');
    const names = json<{ errors: Array<{ in: string; name: string }> }>(response).errors.map(
      (e) => `${e.in} ${e.name}`,
    );
    expect(new Set(names)).toEqual(new Set(['query status', 'query limit']));
  });
});

describe('GET and DELETE /store/orders/{orderId}', () => {
  it('cancels: 200 with status cancelled, idempotent on repeat, visible in GET', async () => {
    const order = json<Order>(await as(alice).post({ petId: available, quantity: 1 }));
    const first = await as(alice).del(`/store/orders/${order.id}`);
    expect(first.statusCode).toBe(200);
    expect(json(first)).toEqual({ ...order, status: 'cancelled' });
    const again = await as(alice).del(`/store/orders/${order.id}`);
    expect(again.statusCode).toBe(200);
    expect(json(again)).toEqual({ ...order, status: 'cancelled' });
    expect(json(await as(alice).get(`/store/orders/${order.id}`))).toEqual({ ...order, status: 'cancelled' });
  });

  it('answers 404 for an order that does not exist', async () => {
    expectProblem(await as(alice).get('/store/orders/999999'), 404, 'not-found');
    expectProblem(await as(alice).del('/store/orders/999999'), 404, 'not-found');
  });

  it.each(['abc', '0', '-1', '1.5', '0x10', '9223372036854775808'])(
    'refuses orderId %j with a 400 naming orderId',
    async (id) => {
      for (const response of [await as(alice).get(`/store/orders/${id}`), await as(alice).del(`/store/orders/${id}`)]) {
        expectProblem(response, 400, 'invalid-request');
        expect(json(response).errors).toEqual([expect.objectContaining({ in: 'path', name: 'orderId' })]);
      }
    },
  );
});
