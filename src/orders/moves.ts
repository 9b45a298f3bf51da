import type { Insertable } from 'kysely';
import type { FulfilmentDelays } from './lifecycle.js';
import type { ChangeFeed } from '../db/change-feed.js';
import { type Db, isEmbedded } from '../db/database.js';
import { canExist } from '../db/ids.js';
import { transactionsOf } from '../db/group-commit.js';
import { prepared } from '../db/prepared.js';
import type { OrdersTable } from '../db/schema.js';
import { lockEventKeys } from '../db/key-locks.js';
import { type Metrics, orderMovesCounter } from '../ops/metrics.js';
import {
  dueAfterEntering,
  isCancellable,
  isComplete,
  nextStatus,
  ORDER_STATUSES,
  type OrderStatus,
} from './lifecycle.js';
import { ORDER_COLUMNS, toOrder } from './repository.js';
import type { Order } from './schemas.js';

/** An order to place: its key, what it asks for, and when it was asked. */
export interface Placing {
  owner: string;
  fields: Pick<Order, 'petId' | 'quantity' | 'shipDate'>;
  now: number;
}

/** An order as a move sees it: the record, and its key's. */
export interface Owned {
  owner: string;
  order: Order;
}

/**
 * Every change of an order's state, with its next move scheduled (./lifecycle.ts). The store writes
 * each change's event in the statement that makes it (migration 005). A move is decided on a row read
 * under a lock held to the end of the caller's transaction (PostgreSQL's row lock; SQLite's one
 * writer), or made by one statement that says which states it moves from, so that two writers never
 * both move one order from the same state: a `DELETE` racing the fulfilment either cancels an order
 * still placed, which the fulfilment then no longer finds due, or cancels the order it approved.
 *
 * Each write is told to `changes` before the call returns, so that the owner's pages held in memory
 * (./order-pages.ts) are forgotten before the change is answered (./repository.ts says why that is
 * soon enough). Once the caller's transaction has committed, `moved` counts what it moved (metrics)
 * and restamps the owners, so that no instance serves a page read before the change (./order-pages.ts);
 * the change is answered after.
 */
export class OrderMoves {
  readonly #pg: boolean;

  constructor(
    private readonly db: Db,
    private readonly delays: FulfilmentDelays,
    private readonly changes?: Pick<ChangeFeed, 'changed'>,
    private readonly counted: (status: OrderStatus, orders: number) => void = () => {},
    private readonly restamp: (owners: readonly string[]) => Promise<void> = async () => {},
  ) {
    this.#pg = !isEmbedded(db);
  }

  /** Which store the moves are written to. */
  get store(): 'sqlite' | 'postgres' {
    return this.#pg ? 'postgres' : 'sqlite';
  }

  /** The moves of `db`, told to `changes`, counted in `metrics`, their owners restamped by `restamp` once committed. */
  static of(
    db: Db,
    delays: FulfilmentDelays,
    changes: Pick<ChangeFeed, 'changed'>,
    metrics: Pick<Metrics, 'orderMoves'>,
    restamp: (owners: readonly string[]) => Promise<void>,
  ): OrderMoves {
    return new OrderMoves(db, delays, changes, orderMovesCounter(metrics), restamp);
  }

  /** Places an order, scheduled for approval (the store writes its `order.placed`). */
  async place(trx: Db, owner: string, fields: Placing['fields'], now: number): Promise<Order> {
    const { rows } = await insertOrder(trx, this.#pg ? 'postgres' : 'sqlite', this.#rowOf({ owner, fields, now }));
    this.changes?.changed('orders', owner);
    return { id: Number(rows[0]!.id), ...fields, status: 'placed' };
  }

  /**
   * Places the orders of one turn together (./placement.ts): one statement inserts them all, in the
   * order given, which is the order of their keys' events, in one transaction (db/group-commit.ts).
   * Answers them in that order. Rejects, having placed none, when any cannot be placed.
   */
  async placeAll(placing: readonly Placing[]): Promise<Order[]> {
    const rows = placing.map((one) => this.#rowOf(one));
    const ids = await transactionsOf(this.db).run(async (trx) => {
      const inserted = await trx.insertInto('orders').values(rows).returning('id').execute();
      for (const owner of new Set(placing.map((p) => p.owner))) this.changes?.changed('orders', owner);
      return inserted.map((row) => Number(row.id));
    });
    // Ids are given in the order the rows are inserted, which is the order of the list: the ids
    // sorted are the orders' ids in the order given, whatever order the store returns them in.
    ids.sort((a, b) => a - b);
    return placing.map(({ fields }, i) => ({ id: ids[i]!, ...fields, status: 'placed' }));
  }

  /** The row of an order placed at `now`, due for approval after the configured delay. */
  #rowOf({ owner, fields, now }: Placing): Omit<Insertable<OrdersTable>, 'id' | 'moved_at'> {
    const due = dueAfterEntering('placed', now, this.delays);
    return {
      api_key_id: owner,
      pet_id: fields.petId,
      quantity: fields.quantity,
      ship_date: fields.shipDate,
      status: 'placed',
      complete: 0,
      created_at: new Date(now).toISOString(),
      due_at: due === null ? null : new Date(due).toISOString(),
    };
  }

  /** One order of the owner's, locked to the end of the transaction: a move decided on it stands. */
  async lock(trx: Db, owner: string, id: number): Promise<Order | undefined> {
    if (!canExist(id)) return undefined;
    let query = trx.selectFrom('orders').select(ORDER_COLUMNS).where('api_key_id', '=', owner).where('id', '=', id);
    if (this.#pg) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return row && toOrder(row);
  }

  /**
   * Cancels the owner's order if it is still `placed` or `approved`, in one statement: a move racing it
   * (the fulfilment approving or delivering) either came first, and the cancellation sees its result, or
   * comes after and finds nothing to move. Answers the cancelled order, or undefined when there was none
   * to cancel (none at all, or one already final: the caller reads which).
   */
  async cancel(db: Db, owner: string, id: number, now: number): Promise<Order | undefined> {
    if (!canExist(id)) return undefined;
    const row = await db
      .updateTable('orders')
      .set({ status: 'cancelled', complete: 0, due_at: null, moved_at: new Date(now).toISOString() })
      .where('api_key_id', '=', owner)
      .where('id', '=', id)
      .where('status', 'in', CANCELLABLE)
      .returning(ORDER_COLUMNS)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    this.changes?.changed('orders', owner);
    return toOrder(row);
  }

  /** Moves a locked order to `to` (the lifecycle allows it: the caller asked). */
  async move(trx: Db, owned: Owned, to: OrderStatus, now: number): Promise<Order> {
    const moved = await this.#moveAll(trx, [owned], to, now);
    return moved[0]!;
  }

  /**
   * The fulfilment's step: up to `limit` orders whose next move is due at `now`, the longest due first,
   * each moved one step. On PostgreSQL the rows another instance is moving are skipped (and the rows
   * taken here are skipped by it), so that every move is made once. Answers the orders moved, how many
   * rows were taken (all `limit` of them: more may be due), and when the first fell due.
   */
  async moveDue(
    trx: Db,
    now: number,
    limit: number,
  ): Promise<{ moved: Owned[]; taken: number; oldestDueAt: number | null }> {
    // A test key whose clock a test moved has its moves in its own time (`catchUp`).
    let query = trx
      .selectFrom('orders')
      .select([...ORDER_COLUMNS, 'due_at', 'api_key_id'])
      .where('due_at', '<=', new Date(now).toISOString())
      .where('api_key_id', 'not in', trx.selectFrom('test_clocks').select('api_key_id'))
      .orderBy('due_at')
      .limit(limit);
    if (this.#pg) query = query.forUpdate().skipLocked();
    const rows = await query.execute();
    if (this.#pg && rows.length > 0) await lockEventKeys(trx, [...new Set(rows.map((row) => row.api_key_id))]);
    const { moved } = await this.#stepEach(
      trx,
      rows.map((row) => ({ owner: row.api_key_id, order: toOrder(row) })),
      now,
    );
    return { moved, taken: rows.length, oldestDueAt: rows[0]?.due_at ? Date.parse(rows[0].due_at) : null };
  }

  /**
   * A test key's moves that fell due by `to` in its time (docs/testing-clients.md#testing-your-client-in-seconds: an
   * advance is as if the time had passed): each made at the instant it fell due, in the order they fell due, at most
   * `limit` of them. A move makes its order due again (its next step): rows are taken in due order up to the earliest
   * instant a move made here falls due again, then taken again. Answers the moves, and whether more may be due.
   */
  async catchUp(trx: Db, owner: string, to: number, limit: number): Promise<{ moved: Owned[]; more: boolean }> {
    if (this.#pg) await lockEventKeys(trx, [owner]);
    const moved: Owned[] = [];
    while (moved.length < limit) {
      let query = trx
        .selectFrom('orders')
        .select([...ORDER_COLUMNS, 'due_at'])
        .where('api_key_id', '=', owner)
        .where('due_at', '<=', new Date(to).toISOString())
        .orderBy('due_at')
        .orderBy('id')
        .limit(limit - moved.length);
      if (this.#pg) query = query.forUpdate();
      const rows = await query.execute();
      if (rows.length === 0) return { moved, more: false };
      let dueAgain = Number.POSITIVE_INFINITY;
      for (let i = 0; i < rows.length;) {
        const dueAt = rows[i]!.due_at!;
        const at = Date.parse(dueAt);
        if (at >= dueAgain) break;
        const group: Owned[] = [];
        for (; i < rows.length && rows[i]!.due_at === dueAt; i++) group.push({ owner, order: toOrder(rows[i]!) });
        const made = await this.#stepEach(trx, group, at);
        moved.push(...made.moved);
        for (const step of made.steps)
          dueAgain = Math.min(dueAgain, dueAfterEntering(step, at, this.delays) ?? Number.POSITIVE_INFINITY);
      }
    }
    return { moved, more: true };
  }

  /**
   * The test keys whose clock a test moved, running, with orders
   * still to move: the fulfilment's `catchUp` of each, in its time.
   */
  async runningClocksWithDueOrders(db: Db): Promise<{ owner: string; offsetMs: number }[]> {
    const rows = await db
      .selectFrom('test_clocks')
      .select(['api_key_id', 'offset_ms'])
      .where('frozen_at', 'is', null)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('orders')
            .select('id')
            .whereRef('orders.api_key_id', '=', 'test_clocks.api_key_id')
            .where('due_at', 'is not', null),
        ),
      )
      .execute();
    return rows.map((row) => ({ owner: row.api_key_id, offsetMs: Number(row.offset_ms) }));
  }

  /** What a committed transaction moved: counted (metrics), and its owners restamped; resolves once they are. */
  moved(owned: readonly Owned[]): Promise<void> {
    const byStatus = new Map<OrderStatus, number>();
    const owners = new Set<string>();
    for (const { owner, order } of owned) {
      byStatus.set(order.status, (byStatus.get(order.status) ?? 0) + 1);
      owners.add(owner);
    }
    for (const [status, n] of byStatus) this.counted(status, n);
    return owners.size === 0 ? Promise.resolve() : this.restamp([...owners]);
  }

  /**
   * Moves each order one step at `now`, the orders of one step together. A final state is never due: a
   * row saying otherwise was written by hand, and it stops being due. Answers the moves and the steps made.
   */
  async #stepEach(trx: Db, owned: readonly Owned[], now: number): Promise<{ moved: Owned[]; steps: OrderStatus[] }> {
    const byStep = new Map<OrderStatus | undefined, Owned[]>();
    for (const one of owned) {
      const step = nextStatus(one.order.status);
      const together = byStep.get(step);
      if (together) together.push(one);
      else byStep.set(step, [one]);
    }
    const moved: Owned[] = [];
    for (const [step, together] of byStep) {
      const ids = together.map((o) => o.order.id);
      if (step === undefined) {
        await trx.updateTable('orders').set({ due_at: null }).where('id', 'in', ids).execute();
        continue;
      }
      const orders = await this.#moveAll(trx, together, step, now);
      orders.forEach((order, i) => moved.push({ owner: together[i]!.owner, order }));
    }
    return { moved, steps: [...byStep.keys()].filter((step) => step !== undefined) };
  }

  async #moveAll(trx: Db, owned: readonly Owned[], to: OrderStatus, now: number): Promise<Order[]> {
    const due = dueAfterEntering(to, now, this.delays);
    const complete = isComplete(to);
    await trx
      .updateTable('orders')
      .set({
        status: to,
        complete: complete ? 1 : 0,
        due_at: due === null ? null : new Date(due).toISOString(),
        moved_at: new Date(now).toISOString(),
      })
      .where(
        'id',
        'in',
        owned.map((o) => o.order.id),
      )
      .execute();
    for (const owner of new Set(owned.map((o) => o.owner))) this.changes?.changed('orders', owner);
    return owned.map(({ order }) => ({ ...order, status: to }));
  }
}

const CANCELLABLE = ORDER_STATUSES.filter(isCancellable);

/** Placing an order is the hottest write: its insert is compiled once. */
const insertOrder = prepared(
  ['api_key_id', 'pet_id', 'quantity', 'ship_date', 'status', 'complete', 'created_at', 'due_at'],
  (db, row: Omit<Insertable<OrdersTable>, 'id' | 'moved_at'>) =>
    db
      .insertInto('orders')
      .values({
        api_key_id: row.api_key_id,
        pet_id: row.pet_id,
        quantity: row.quantity,
        ship_date: row.ship_date,
        status: row.status,
        complete: row.complete,
        created_at: row.created_at,
        due_at: row.due_at,
      })
      .returning('id'),
);
