import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { TEST_STORE } from '../helpers/database.js';
import { eventsOf, type Event } from '../helpers/events.js';
import { firstPetWith, type Order, ordersAs } from '../helpers/orders.js';
import { tempDir } from '../helpers/process.js';

/**
 * The service moves orders by itself: approved 10 s after placing,
 * delivered 60 s after approval (docs/orders-and-events.md).
 */

const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function started(
  env: Record<string, string> = {},
  options: Parameters<typeof testApp>[0] = {},
): Promise<TestApp> {
  const t = await testApp({ ...options, env: { ...env, ...options.env } });
  apps.push(t);
  return t;
}

async function placed(t: TestApp, key: string): Promise<Order> {
  const response = await ordersAs(t, key).post({
    petId: await firstPetWith(t, key, 'available'),
    quantity: 1,
    shipDate: '2030-01-01T00:00:00Z',
  });
  expect(response.statusCode).toBe(201);
  return json<Order>(response);
}

const read = async (t: TestApp, key: string, id: number) =>
  json<Order>(await ordersAs(t, key).get(`/store/orders/${id}`));

describe('fulfilment', () => {
  it('approves an order 10 s after it was placed and delivers it 60 s after approval, with an event each, shipDate untouched', async () => {
    const t = await started();
    const key = await t.newKey('pro');
    const order = await placed(t, key);
    expect(order).toMatchObject({ status: 'placed' });

    t.clock.advance(9_999);
    expect(await t.fulfilment.runDue()).toBe(0);
    expect((await read(t, key, order.id)).status).toBe('placed');

    t.clock.advance(1);
    expect(await t.fulfilment.runDue()).toBe(1);
    expect(await read(t, key, order.id)).toEqual({ ...order, status: 'approved' });

    t.clock.advance(59_999);
    expect(await t.fulfilment.runDue()).toBe(0);
    t.clock.advance(1);
    expect(await t.fulfilment.runDue()).toBe(1);
    const delivered = await read(t, key, order.id);
    expect(delivered).toEqual({ ...order, status: 'delivered' });
    expect(delivered.shipDate).toBe('2030-01-01T00:00:00.000Z');

    t.clock.advance(3_600_000);
    expect(await t.fulfilment.runDue()).toBe(0);
    const events = await eventsOf(t, key);
    expect(events.map((e) => e.type)).toEqual(['order.delivered', 'order.approved', 'order.placed']);
    expect(events.map((e) => e.data.status)).toEqual(['delivered', 'approved', 'placed']);
    const placedAt = Date.parse(events[2]!.timestamp);
    expect(Date.parse(events[1]!.timestamp) - placedAt).toBe(10_000);
    expect(Date.parse(events[0]!.timestamp) - placedAt).toBe(70_000);
  });

  it('restamps the key of every order it moves, placed, cancelled or advanced, once the change is committed and before it is answered', async () => {
    // What each restamp found committed: the key's orders and their states, as another instance would read them.
    const seen: string[] = [];
    const app: { t?: TestApp } = {};
    // A limiter whose verdicts carry stamps, as the Redis store's do.
    const limiter = new (class extends MemoryLimiterStore {
      override readonly stamps = true;
      override async restamp(callers: readonly string[]): Promise<void> {
        const keyIds = callers.map((caller) => caller.replace(/^key:/, ''));
        const rows = await app
          .t!.db.selectFrom('orders')
          .select(['status'])
          .where('api_key_id', 'in', keyIds)
          .orderBy('id')
          .execute();
        seen.push(`${callers.join(',')}: ${rows.map((row) => row.status).join(' ')}`);
      }
    })({ clock: () => Date.now() });
    const t = (app.t = await started({}, { limiter }));
    const [key, test] = [await t.newKey('pro'), await t.newKey({ plan: 'pro', test: true })];
    const [keyId, testId] = await Promise.all([key, test].map(async (k) => (await t.keys.findByKey(k))!.id));
    const first = await placed(t, key);
    await placed(t, key);
    t.clock.advance(10_000);
    expect(await t.fulfilment.runDue()).toBe(2);
    expect((await ordersAs(t, key).del(`/store/orders/${first.id}`)).statusCode).toBe(200);
    const practice = await placed(t, test);
    expect(
      (
        await t.app.inject({
          method: 'POST',
          url: `/store/orders/${practice.id}/advance`,
          headers: { 'x-api-key': test },
        })
      ).statusCode,
    ).toBe(200);
    // On the embedded store every change is told at once and nothing is stamped (orders/order-pages.ts).
    expect(seen).toEqual(
      TEST_STORE === 'sqlite'
        ? []
        : [
            `key:${keyId}: placed`,
            `key:${keyId}: placed placed`,
            `key:${keyId}: approved approved`,
            `key:${keyId}: cancelled approved`,
            `key:${testId}: placed`,
            `key:${testId}: approved`,
          ],
    );
  });

  it('moves nothing by itself when a delay is 0: a test key advances it, and the next step then follows its own delay', async () => {
    const t = await started({ FULFILMENT_APPROVE_SECONDS: '0', FULFILMENT_DELIVER_SECONDS: '30' });
    const key = await t.newKey({ plan: 'pro', test: true });
    const order = await placed(t, key);
    t.clock.advance(365 * 24 * 3_600_000);
    expect(await t.fulfilment.runDue()).toBe(0);
    expect((await read(t, key, order.id)).status).toBe('placed');

    expect(
      json<Order>(
        await t.app.inject({ method: 'POST', url: `/store/orders/${order.id}/advance`, headers: { 'x-api-key': key } }),
      ).status,
    ).toBe('approved');
    t.clock.advance(29_999);
    expect(await t.fulfilment.runDue()).toBe(0);
    t.clock.advance(1);
    expect(await t.fulfilment.runDue()).toBe(1);
    expect((await read(t, key, order.id)).status).toBe('delivered');
  });

  it('never delivers by itself when FULFILMENT_DELIVER_SECONDS is 0', async () => {
    const t = await started({ FULFILMENT_DELIVER_SECONDS: '0' });
    const key = await t.newKey('pro');
    const order = await placed(t, key);
    t.clock.advance(10_000);
    expect(await t.fulfilment.runDue()).toBe(1);
    t.clock.advance(365 * 24 * 3_600_000);
    expect(await t.fulfilment.runDue()).toBe(0);
    expect((await read(t, key, order.id)).status).toBe('approved');
  });

  it('makes a move that fell due while no instance ran at the next start, once', async () => {
    const first = await testApp(TEST_STORE === 'sqlite' ? { sqliteFile: join(tempDir(), 'restart.db') } : {});
    const key = await first.newKey('pro');
    const orders = [await placed(first, key), await placed(first, key)];
    await first.close({ keepStore: true });

    // Stopped for an hour: both fell due for approval, and since then for nothing else.
    const clock = first.clock;
    clock.advance(3_600_000);
    const next = await started({}, { store: first.store, clock });
    await next.fulfilment.start();
    for (const order of orders) expect((await read(next, key, order.id)).status).toBe('approved');
    expect(await next.fulfilment.runDue()).toBe(0);
    expect((await eventsOf(next, key)).map((e) => e.type).sort()).toEqual([
      'order.approved',
      'order.approved',
      'order.placed',
      'order.placed',
    ]);
  });

  it('cancels a placed or an approved order, with its event, and no move follows a cancellation', async () => {
    const t = await started();
    const key = await t.newKey('pro');
    const early = await placed(t, key);
    const late = await placed(t, key);
    t.clock.advance(10_000);
    expect(await t.fulfilment.runDue()).toBe(2);
    expect(json<Order>(await ordersAs(t, key).del(`/store/orders/${late.id}`)).status).toBe('cancelled');
    const second = await placed(t, key);
    expect(json<Order>(await ordersAs(t, key).del(`/store/orders/${second.id}`))).toEqual({
      ...second,
      status: 'cancelled',
    });
    // Cancelling again changes nothing and writes nothing.
    expect(json<Order>(await ordersAs(t, key).del(`/store/orders/${second.id}`)).status).toBe('cancelled');
    t.clock.advance(3_600_000);
    expect(await t.fulfilment.runDue()).toBe(1);
    expect((await read(t, key, early.id)).status).toBe('delivered');
    expect((await read(t, key, second.id)).status).toBe('cancelled');
    const byOrder = (id: number, events: Event[]) => events.filter((e) => e.data.id === id).map((e) => e.type);
    const events = await eventsOf(t, key);
    expect(byOrder(late.id, events)).toEqual(['order.cancelled', 'order.approved', 'order.placed']);
    expect(byOrder(second.id, events)).toEqual(['order.cancelled', 'order.placed']);
    const refused = await ordersAs(t, key).del(`/store/orders/${early.id}`);
    expect(refused.statusCode).toBe(409);
    expect(json(refused).type).toBe('http://petstore.test/problems/order-not-cancellable');
  });

  it('counts every move in metrics, and the lag of the oldest due order when it was taken', async () => {
    const t = await started();
    const key = await t.newKey('pro');
    await placed(t, key);
    await placed(t, key);
    t.clock.advance(12_500);
    await t.fulfilment.runDue();
    const metrics = (await t.admin.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/^petstore_order_moves_total\{to="placed"\} 2$/m);
    expect(metrics).toMatch(/^petstore_order_moves_total\{to="approved"\} 2$/m);
    expect(metrics).toMatch(/^petstore_fulfilment_lag_seconds 2\.5$/m);
    await t.fulfilment.runDue();
    expect((await t.admin.inject({ url: '/metrics' })).body).toMatch(/^petstore_fulfilment_lag_seconds 0$/m);
  });

  it('moves a flood of due orders in slices, every one once', async () => {
    const t = await started();
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 });
    const count = 300;
    for (let i = 0; i < count; i++) await placed(t, key);
    t.clock.advance(10_000);
    expect(await t.fulfilment.runDue()).toBe(count);
    const events = await eventsOf(t, key);
    expect(events.filter((e) => e.type === 'order.approved')).toHaveLength(count);
    expect(new Set(events.filter((e) => e.type === 'order.approved').map((e) => e.data.id)).size).toBe(count);
  });
});
