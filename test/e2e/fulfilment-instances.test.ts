import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type ChangeFeed, openChangeFeed } from '../../src/db/change-feed.js';
import { type Db, openDatabase } from '../../src/db/database.js';
import { transactionsOf } from '../../src/db/group-commit.js';
import { EventsRepository } from '../../src/events/repository.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { Fulfilment } from '../../src/orders/fulfilment.js';
import { OrderMoves } from '../../src/orders/moves.js';
import { fakeClock } from '../helpers/clock.js';
import { postgresAvailable, type TestDatabase, testDatabase } from '../helpers/database.js';

/**
 * Instances sharing one PostgreSQL: each is a pool of its own with its own fulfilment, as two
 * processes would be. Every move is made once and recorded once, whoever makes it.
 */
const available = await postgresAvailable();

interface Instance {
  db: Db;
  changes: ChangeFeed;
  moves: OrderMoves;
  fulfilment: Fulfilment;
}

describe.skipIf(!available)('two instances on PostgreSQL', () => {
  const clock = fakeClock();
  const delays = loadConfig({}).fulfilment;
  const quiet = { warn: () => {}, info: () => {} };
  let store: TestDatabase;
  let instances: Instance[];
  let owners: string[];

  beforeAll(async () => {
    store = await testDatabase({ kind: 'postgres' });
    instances = [0, 1].map(() => {
      const db = openDatabase(store.config);
      const changes = openChangeFeed(db, store.config, { clock });
      const moves = OrderMoves.of(db, delays, changes, createMetrics(), async () => {});
      // Slices as the service takes them, with no rest: both instances work through the backlog at once.
      const pace = { sliceMs: 5, idleShare: 1, busyShare: 1, first: 50, min: 10, max: 200 };
      return {
        db,
        changes,
        moves,
        fulfilment: new Fulfilment({
          moves,
          transactions: transactionsOf(db),
          clock,
          lag: { set() {} },
          log: quiet,
          pace,
        }),
      };
    });
    const keys = new KeysRepository(store.db, clock);
    owners = await Promise.all(
      Array.from({ length: 20 }, async () => (await keys.create({ plan: 'business' })).record.id),
    );
  });
  afterAll(async () => {
    for (const instance of instances ?? []) {
      await instance.changes.close();
      await instance.db.destroy();
    }
    await store?.db.destroy();
    await store?.drop();
  });

  async function place(count: number): Promise<number[]> {
    const ids: number[] = [];
    const [a, b] = instances;
    // Placed from both instances, twenty keys interleaved, ten at a time.
    for (let i = 0; i < count; i += 10) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(10, count - i) }, (_, j) => {
          const instance = (i + j) % 2 ? a! : b!;
          const owner = owners[(i + j) % owners.length]!;
          return transactionsOf(instance.db).run((trx) =>
            instance.moves.place(trx, owner, { petId: 1, quantity: 1, shipDate: '2030-01-01T00:00:00.000Z' }, clock()),
          );
        }),
      );
      ids.push(...batch.map((order) => order.id));
    }
    return ids;
  }

  async function eventTypesByOrder(ids: number[]): Promise<Map<number, string[]>> {
    const rows = await store.db
      .selectFrom('events')
      .select(['order_id', 'type'])
      .where('order_id', 'in', ids)
      .orderBy('seq')
      .execute();
    const byOrder = new Map<number, string[]>(ids.map((id) => [id, []]));
    for (const row of rows) byOrder.get(Number(row.order_id))!.push(row.type);
    return byOrder;
  }

  it('move 1,000 orders falling due together once each, with exactly one event per move', async () => {
    const ids = await place(1_000);
    clock.advance(10_000);
    const [a, b] = await Promise.all(instances.map((instance) => instance.fulfilment.runDue()));
    expect(a! + b!).toBe(1_000);
    clock.advance(60_000);
    const [c, d] = await Promise.all(instances.map((instance) => instance.fulfilment.runDue()));
    expect(c! + d!).toBe(1_000);

    const statuses = await store.db
      .selectFrom('orders')
      .select(['status', 'complete'])
      .where('id', 'in', ids)
      .execute();
    expect(statuses.every((o) => o.status === 'delivered' && o.complete === 1)).toBe(true);
    for (const [id, types] of await eventTypesByOrder(ids))
      expect(types, `order ${id}`).toEqual(['order.placed', 'order.approved', 'order.delivered']);
  });

  it('end a DELETE racing the approval in one state with the events of one path, never a fork', async () => {
    const ids = await place(200);
    clock.advance(10_000);
    // Each order is cancelled through one instance while both instances approve what fell due.
    const ownerOf = new Map(
      (await store.db.selectFrom('orders').select(['id', 'api_key_id']).where('id', 'in', ids).execute()).map((o) => [
        Number(o.id),
        o.api_key_id,
      ]),
    );
    const cancel = (id: number, instance: Instance) =>
      instance.moves.cancel(instance.db, ownerOf.get(id)!, id, clock());
    await Promise.all([
      ...instances.map((instance) => instance.fulfilment.runDue()),
      ...ids.map((id, i) => cancel(id, instances[i % 2]!)),
    ]);

    const statuses = await store.db.selectFrom('orders').select('status').where('id', 'in', ids).execute();
    expect(statuses.every((o) => o.status === 'cancelled')).toBe(true);
    let approvedFirst = 0;
    for (const [id, types] of await eventTypesByOrder(ids)) {
      // Cancelled while placed (the approval then found nothing due), or cancelled once approved: the
      // approval is never recorded after, or beside, the cancellation.
      expect(
        [
          ['order.placed', 'order.cancelled'],
          ['order.placed', 'order.approved', 'order.cancelled'],
        ],
        `order ${id}`,
      ).toContainEqual(types);
      if (types.length === 3) approvedFirst++;
    }
    expect(approvedFirst).toBeLessThan(ids.length);
  });

  it('make every event of one key visible in the order it was written: a reader catching up newest first misses none', async () => {
    const owner = owners[0]!;
    const events = new EventsRepository(store.db);
    const seen = new Set<string>();
    const catchUp = async () => {
      // Newest first, down to the newest event read before.
      for (let afterId = 0; ;) {
        const page = await events.list(owner, {}, { afterId, limit: 100 });
        const fresh = page.events.filter((e) => !seen.has(e.id));
        for (const e of fresh) seen.add(e.id);
        if (fresh.length < page.events.length || page.next === null) return;
        afterId = page.next;
      }
    };
    let placing = true;
    const reader = (async () => {
      while (placing) await catchUp();
    })();
    // Forty placements at a time for one key, from both instances, while the reader reads.
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          transactionsOf(instances[i % 2]!.db).run((trx) =>
            instances[i % 2]!.moves.place(
              trx,
              owner,
              { petId: 1, quantity: 1, shipDate: '2030-01-01T00:00:00.000Z' },
              clock(),
            ),
          ),
        ),
      );
    }
    placing = false;
    await reader;
    await catchUp();
    const all = await store.db.selectFrom('events').select(['seq', 'nonce']).where('api_key_id', '=', owner).execute();
    expect(seen.size).toBe(all.length);
  });
});
