import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import { canExist } from '../db/ids.js';
import type { PageRequest, Rows } from '../db/keyset.js';
import type { EventsTable } from '../db/schema.js';
import type { Event, EventType } from './schemas.js';

export interface EventFilter {
  types?: readonly EventType[];
  orderId?: number;
}

/** Events as they are read: the event, and its place in the order of writing (the cursor's). */
export interface Listed {
  seq: number;
  event: Event;
}

/** A key's events. Every query is scoped by the owner: another key's event does not exist here. */
export class EventsRepository {
  constructor(private readonly db: Db) {}

  async find(owner: string, id: string): Promise<Event | undefined> {
    const row = await this.db.selectFrom('events').select(EVENT_COLUMNS).where('api_key_id', '=', owner).where('id', '=', id).executeTakeFirst();
    return row && toEvent(row);
  }

  /**
   * One page, newest first, by keyset on `seq`: a page holds the events written before the cursor's
   * (`afterId`, 0 for the newest), so none is skipped or repeated however many arrive meanwhile
   * (./record.ts says why that holds on PostgreSQL too). One row beyond the limit is read, only to say
   * whether more follow.
   */
  async list(owner: string, filter: EventFilter, page: PageRequest): Promise<Rows<Listed>> {
    let query = this.db
      .selectFrom('events')
      .select(['seq', ...EVENT_COLUMNS])
      .where('api_key_id', '=', owner);
    if (filter.types?.length) query = query.where('type', 'in', filter.types);
    if (filter.orderId !== undefined) {
      if (!canExist(filter.orderId)) return { rows: [], more: false };
      query = query.where('order_id', '=', filter.orderId);
    }
    if (page.afterId > 0) query = query.where('seq', '<', page.afterId);
    const fetched = await query
      .orderBy('seq', 'desc')
      .limit(page.limit + 1)
      .execute();
    return { rows: fetched.slice(0, page.limit).map((row) => ({ seq: row.seq, event: toEvent(row) })), more: fetched.length > page.limit };
  }
}

const EVENT_COLUMNS = ['id', 'type', 'created_at', 'livemode', 'data'] as const;

function toEvent(row: Pick<Selectable<EventsTable>, (typeof EVENT_COLUMNS)[number]>): Event {
  return {
    id: row.id,
    type: row.type as EventType,
    timestamp: row.created_at,
    livemode: row.livemode === 1,
    data: JSON.parse(row.data) as Event['data'],
  };
}
