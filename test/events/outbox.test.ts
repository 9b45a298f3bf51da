import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { TEST_STORE } from '../helpers/database.js';
import { eventsOf } from '../helpers/events.js';
import { expectProblem, firstPetWith, type Order, ordersAs } from '../helpers/orders.js';

/**
 * Every change of an order and its event are written in one transaction: when the event cannot be
 * written, the change is not made either. The store itself refuses the event (a trigger), as a full
 * disk or a failing constraint would.
 */

let t: TestApp;
let key: string;
let pet: number;

async function failEventWrites(): Promise<void> {
  if (TEST_STORE === 'sqlite') {
    await sql`create trigger events_fail before insert on events begin select raise(abort, 'the event write failed'); end`.execute(
      t.db,
    );
    return;
  }
  await sql`create function fail_event() returns trigger language plpgsql as $$ begin raise exception 'the event write failed'; end $$`.execute(
    t.db,
  );
  await sql`create trigger events_fail before insert on events for each row execute function fail_event()`.execute(
    t.db,
  );
}

async function allowEventWrites(): Promise<void> {
  await sql`drop trigger events_fail${sql.raw(TEST_STORE === 'sqlite' ? '' : ' on events')}`.execute(t.db);
  if (TEST_STORE === 'postgres') await sql`drop function fail_event()`.execute(t.db);
}

async function ordersInStore(): Promise<Array<{ id: number; status: string }>> {
  return t.db.selectFrom('orders').select(['id', 'status']).orderBy('id').execute();
}

beforeAll(async () => {
  t = await testApp();
  key = await t.newKey({ plan: 'business', test: true });
  pet = await firstPetWith(t, key, 'available');
});
afterAll(async () => {
  await t.close();
});

describe('a change whose event cannot be written', () => {
  it('is not made: placing, cancelling, advancing and the fulfilment all leave the store as it was', async () => {
    const placed = json<Order>(await ordersAs(t, key).post({ petId: pet, quantity: 1 }));
    const before = await ordersInStore();
    const events = await eventsOf(t, key);
    await failEventWrites();
    try {
      expectProblem(await ordersAs(t, key).post({ petId: pet, quantity: 1 }), 500, 'internal-error');
      expectProblem(
        await t.app.inject({
          method: 'POST',
          url: '/store/orders',
          headers: { 'x-api-key': key, 'idempotency-key': 'k-1' },
          payload: { petId: pet },
        }),
        500,
        'internal-error',
      );
      expectProblem(await ordersAs(t, key).del(`/store/orders/${placed.id}`), 500, 'internal-error');
      expectProblem(
        await t.app.inject({
          method: 'POST',
          url: `/store/orders/${placed.id}/advance`,
          headers: { 'x-api-key': key },
        }),
        500,
        'internal-error',
      );
      t.clock.advance(10_000);
      await expect(t.fulfilment.runDue()).rejects.toThrow(/the event write failed/);
      expect(await ordersInStore()).toEqual(before);
      expect(await t.db.selectFrom('idempotency_records').selectAll().execute()).toEqual([]);
    } finally {
      await allowEventWrites();
    }
    expect(await eventsOf(t, key)).toEqual(events);
    // Once events can be written, everything happens, each with its event.
    expect(await t.fulfilment.runDue()).toBe(1);
    const retried = await t.app.inject({
      method: 'POST',
      url: '/store/orders',
      headers: { 'x-api-key': key, 'idempotency-key': 'k-1' },
      payload: { petId: pet },
    });
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await eventsOf(t, key)).map((e) => e.type)).toEqual(['order.placed', 'order.approved', 'order.placed']);
  });
});
