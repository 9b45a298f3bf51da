import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { expectProblem, firstPetWith, type Order, ordersAs } from '../helpers/orders.js';

/**
 * Events belong to the key whose order they record: another key
 * neither sees them nor learns they exist; over a real socket.
 */

describe('over a real socket', () => {
  let t: TestApp;
  let alice: string;
  let mallory: string;
  let order: Order;

  beforeAll(async () => {
    t = await testApp({ overSocket: true });
    alice = await t.newKey({ plan: 'business', test: true });
    mallory = await t.newKey({ plan: 'business', test: true });
    order = json<Order>(
      await ordersAs(t, alice).post({ petId: await firstPetWith(t, alice, 'available'), quantity: 1 }),
    );
    await t.request({ method: 'POST', url: `/store/orders/${order.id}/advance`, headers: { 'x-api-key': alice } });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('another key’s events', () => {
    it('are not listed, whatever the filter', async () => {
      expect(await eventsOf(t, alice)).toHaveLength(2);
      expect(await eventsOf(t, mallory)).toEqual([]);
      expect(await eventsOf(t, mallory, `orderId=${order.id}`)).toEqual([]);
      expect(await eventsOf(t, mallory, 'type=order.placed&type=order.approved')).toEqual([]);
    });

    it('are not found by id: the same 404 as an id nobody has', async () => {
      const [event] = await eventsOf(t, alice);
      const theirs = await t.request({ url: `/events/${event!.id}`, headers: { 'x-api-key': mallory } });
      const nobodys = await t.request({ url: '/events/evt_zzzz000000000000', headers: { 'x-api-key': mallory } });
      expectProblem(theirs, 404, 'not-found');
      expect(json(theirs).detail).toBe(json(nobodys).detail.replace('evt_zzzz000000000000', event!.id));
    });

    it('cannot be read past with another key’s cursor: a cursor is bound to the key that was given it, and another’s is a 400', async () => {
      const page = json<{ nextCursor: string }>(
        await t.request({ url: '/events?limit=1', headers: { 'x-api-key': alice } }),
      );
      expect(page.nextCursor).not.toBeNull();
      const theirs = await t.request({
        url: `/events?limit=100&cursor=${page.nextCursor}`,
        headers: { 'x-api-key': mallory },
      });
      expectProblem(theirs, 400, 'invalid-request');
      expect(json(theirs).errors).toEqual([expect.objectContaining({ in: 'query', name: 'cursor' })]);
    });

    it('cannot be made by moving another key’s order', async () => {
      expectProblem(
        await t.request({
          method: 'POST',
          url: `/store/orders/${order.id}/advance`,
          headers: { 'x-api-key': mallory },
        }),
        404,
        'not-found',
      );
      expectProblem(await ordersAs(t, mallory).del(`/store/orders/${order.id}`), 404, 'not-found');
      expect((await eventsOf(t, alice)).map((e) => e.type)).toEqual(['order.approved', 'order.placed']);
    });

    it('need a key: no key is a 401', async () => {
      expectProblem(await t.request({ url: '/events' }), 401, 'unauthorized');
      expectProblem(await t.request({ url: '/events/evt_zzzz000000000000' }), 401, 'unauthorized');
    });
  });
});
