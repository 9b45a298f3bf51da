import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotentWrites } from '../../src/idempotency/writes.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { OrderMoves } from '../../src/orders/moves.js';
import { OrderPlacement } from '../../src/orders/placement.js';
import type { Pet } from '../../src/pets/schemas.js';
import { fakeClock } from '../helpers/clock.js';
import { type TestDatabase, testDatabase } from '../helpers/database.js';

/**
 * Orders placed without an idempotency key in one turn are inserted together, by one statement
 * (orders/placement.ts): each is answered with its own id, in the order asked, its key's events in
 * that order; should one of them not be placeable by the store, it alone fails.
 */

let store: TestDatabase;
let placement: OrderPlacement;
const clock = fakeClock();
/** The catalogue as memory holds it: pet 999999 is there, but not in the store (removed since). */
const pet = (id: number): Pet => ({
  id,
  name: 'Rex',
  category: { id: 1, name: 'Dogs' },
  photos: [],
  tags: [],
  status: 'available',
});
beforeAll(async () => {
  store = await testDatabase();
  const moves = new OrderMoves(store.db, { approveMs: null, deliverMs: null });
  placement = new OrderPlacement(new IdempotentWrites(store.db, clock), moves, clock, {
    find: async (id: number) => pet(id),
  });
});
afterAll(async () => {
  await store.db.destroy();
  await store.drop();
});

const newKey = async () => (await new KeysRepository(store.db, clock).create({ plan: 'business' })).record;

describe('orders placed in one turn', () => {
  it('are each answered with their own id, in the order asked, and their events follow that order', async () => {
    const [a, b] = [await newKey(), await newKey()];
    const asked = Array.from({ length: 30 }, (_, i) => ({ owner: i % 3 === 0 ? b : a, quantity: i + 1 }));
    const placed = await Promise.all(
      asked.map(({ owner, quantity }) => placement.place(owner, { petId: 1, quantity })),
    );
    expect(placed.map((p) => p.order.quantity)).toEqual(asked.map((x) => x.quantity));
    const ids = placed.map((p) => p.order.id);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    for (const owner of [a, b]) {
      const rows = await store.db
        .selectFrom('orders')
        .select(['id', 'quantity'])
        .where('api_key_id', '=', owner.id)
        .orderBy('id')
        .execute();
      expect(rows.map((r) => [Number(r.id), r.quantity])).toEqual(
        placed.filter((_, i) => asked[i]!.owner === owner).map((p) => [p.order.id, p.order.quantity]),
      );
      const events = await store.db
        .selectFrom('events')
        .select(['order_id'])
        .where('api_key_id', '=', owner.id)
        .orderBy('seq')
        .execute();
      expect(events.map((e) => Number(e.order_id))).toEqual(rows.map((r) => Number(r.id)));
    }
  });

  it('fail alone: an order the store refuses (its pet is gone) is rejected, and the others of its turn are placed', async () => {
    const owner = await newKey();
    const results = await Promise.allSettled([1, 999_999, 2].map((petId) => placement.place(owner, { petId })));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const rows = await store.db
      .selectFrom('orders')
      .select(['pet_id'])
      .where('api_key_id', '=', owner.id)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => Number(r.pet_id))).toEqual([1, 2]);
  });
});
