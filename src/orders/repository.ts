import type { Insertable, Selectable } from 'kysely';
import type { ChangeFeed } from '../db/change-feed.js';
import type { Db } from '../db/database.js';
import { canExist } from '../db/ids.js';
import { type PageRequest, pageOfRows, type Rows } from '../db/keyset.js';
import { prepared } from '../db/prepared.js';
import type { OrdersTable } from '../db/schema.js';
import type { Order } from './schemas.js';

/**
 * Orders belong to the key that placed them: every query is scoped by the owner's key id.
 * Construct one over a transaction to make its writes part of it. Every write is told to `changes`
 * before the call returns, so that the owner's pages held in memory (./order-pages.ts) are forgotten
 * before the change is answered; within a transaction that is before its commit, which on SQLite
 * holds the only connection: no read can see the old rows after being told.
 */
export class OrdersRepository {
  constructor(
    private readonly db: Db,
    private readonly changes?: Pick<ChangeFeed, 'changed'>,
  ) {}

  async create(owner: string, order: Omit<Order, 'id'>, createdAt: string): Promise<Order> {
    const { rows } = await insertOrder(this.db, {
      api_key_id: owner,
      pet_id: order.petId,
      quantity: order.quantity,
      ship_date: order.shipDate,
      status: order.status,
      complete: order.complete ? 1 : 0,
      created_at: createdAt,
    });
    this.changes?.changed('orders', owner);
    return { id: Number(rows[0]!.id), ...order };
  }

  async find(owner: string, id: number): Promise<Order | undefined> {
    if (!canExist(id)) return undefined;
    const row = await this.db.selectFrom('orders').select(ORDER_COLUMNS).where('api_key_id', '=', owner).where('id', '=', id).executeTakeFirst();
    return row && toOrder(row);
  }

  /** The page's orders of the owner after the requested id, and whether more follow: the route makes the cursor. */
  async list(owner: string, filter: { status?: Order['status'] }, page: PageRequest): Promise<Rows<Order>> {
    let query = this.db.selectFrom('orders').select(ORDER_COLUMNS).where('api_key_id', '=', owner);
    if (filter.status) query = query.where('status', '=', filter.status);
    const { rows, more } = await pageOfRows(query, page);
    return { rows: rows.map(toOrder), more };
  }

  async setStatus(owner: string, id: number, status: Order['status']): Promise<void> {
    await this.db.updateTable('orders').set({ status }).where('api_key_id', '=', owner).where('id', '=', id).execute();
    this.changes?.changed('orders', owner);
  }
}

/** Placing an order is the hottest write: its insert is compiled once. */
const insertOrder = prepared((db, row: Omit<Insertable<OrdersTable>, 'id'>) =>
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
    })
    .returning('id'),
);

/** What an order shows: turning a column into a JavaScript value is most of a listing's cost. */
const ORDER_COLUMNS = ['id', 'pet_id', 'quantity', 'ship_date', 'status', 'complete'] as const;

function toOrder(row: Pick<Selectable<OrdersTable>, (typeof ORDER_COLUMNS)[number]>): Order {
  return {
    id: row.id,
    petId: Number(row.pet_id),
    quantity: row.quantity,
    shipDate: row.ship_date,
    status: row.status as Order['status'],
    complete: row.complete === 1,
  };
}
