import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import { canExist } from '../db/ids.js';
import { pageOfRows } from '../db/keyset.js';
import type { PageRequest, Rows } from '../page.js';
import type { OrdersTable } from '../db/schema.js';
import type { OrderStatus } from './lifecycle.js';
import type { Order } from './schemas.js';

/**
 * Reading orders. They belong to the key that placed them: every query is scoped by the owner's key
 * id. Every write is a move of the order's state (./moves.ts), which tells the change feed before it
 * returns, so that the owner's pages held in memory (./order-pages.ts) are forgotten before the change
 * is answered; within a transaction that is before its commit, which on SQLite holds the only
 * connection: no read can see the old rows after being told.
 */
export class OrdersRepository {
  constructor(private readonly db: Db) {}

  async find(owner: string, id: number): Promise<Order | undefined> {
    if (!canExist(id)) return undefined;
    const row = await this.db
      .selectFrom('orders')
      .select(ORDER_COLUMNS)
      .where('api_key_id', '=', owner)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toOrder(row);
  }

  /**
   * The owner's newest orders, with when each was placed, last moved and moves next (the admin's view: orders/cli.ts).
   */
  async recent(owner: string, filter: { status?: OrderStatus }, limit: number): Promise<AdminOrder[]> {
    let query = this.db
      .selectFrom('orders')
      .select([...ORDER_COLUMNS, 'created_at', 'moved_at', 'due_at'])
      .where('api_key_id', '=', owner);
    if (filter.status) query = query.where('status', '=', filter.status);
    const rows = await query.orderBy('id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      ...toOrder(row),
      placedAt: row.created_at,
      movedAt: row.moved_at ?? row.created_at,
      dueAt: row.due_at,
    }));
  }

  /** The page's orders of the owner after the requested id, and whether more follow: the route makes the cursor. */
  async list(owner: string, filter: { status?: OrderStatus }, page: PageRequest): Promise<Rows<Order>> {
    let query = this.db.selectFrom('orders').select(ORDER_COLUMNS).where('api_key_id', '=', owner);
    if (filter.status) query = query.where('status', '=', filter.status);
    const { rows, more } = await pageOfRows(query, page);
    return { rows: rows.map(toOrder), more };
  }
}

/**
 * An order as the admin sees it: the record, when it was placed and
 * entered its state, and when it moves next by itself (null: never).
 */
export interface AdminOrder extends Order {
  placedAt: string;
  movedAt: string;
  dueAt: string | null;
}

/** What an order shows: turning a column into a JavaScript value is most of a listing's cost. */
export const ORDER_COLUMNS = ['id', 'pet_id', 'quantity', 'ship_date', 'status'] as const;

export function toOrder(row: Pick<Selectable<OrdersTable>, (typeof ORDER_COLUMNS)[number]>): Order {
  return {
    id: row.id,
    petId: Number(row.pet_id),
    quantity: row.quantity,
    shipDate: row.ship_date,
    status: row.status as OrderStatus,
  };
}
