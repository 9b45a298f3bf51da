import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { expectProblem, firstPetWith, type Order, ordersAs, type Page } from '../helpers/orders.js';

/**
 * Orders belong to the key that placed them: another key neither sees them nor learns they exist; over a real socket.
 */

describe('over a real socket', () => {
  let t: TestApp;
  let alice: string;
  let bob: string;
  let available: number;

  const as = (key: string) => ordersAs(t, key);

  beforeAll(async () => {
    t = await testApp({ overSocket: true });
    alice = await t.newKey('business');
    bob = await t.newKey('business');
    available = await firstPetWith(t, alice, 'available');
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /store/orders', () => {
    it('lists only the caller’s orders', async () => {
      const carol = await t.newKey('business');
      const dave = await t.newKey('business');
      const placed = json<Order>(await as(carol).post({ petId: available, quantity: 3 }));
      const response = await as(carol).get('/store/orders');
      expect(response.statusCode).toBe(200);
      expect(json<Page<Order>>(response)).toEqual({ data: [placed], nextCursor: null });
      expect(json<Page<Order>>(await as(dave).get('/store/orders'))).toEqual({ data: [], nextCursor: null });
    });
  });

  describe('GET and DELETE /store/orders/{orderId}', () => {
    it('hides another key’s order: 404 on GET and DELETE, and leaves it untouched', async () => {
      const order = json<Order>(await as(alice).post({ petId: available, quantity: 1 }));
      expectProblem(await as(bob).get(`/store/orders/${order.id}`), 404, 'not-found');
      expectProblem(await as(bob).del(`/store/orders/${order.id}`), 404, 'not-found');
      expect(json<Order>(await as(alice).get(`/store/orders/${order.id}`)).status).toBe('placed');
    });
  });
});
