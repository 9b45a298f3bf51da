import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/database.js';
import { canExist } from '../db/ids.js';
import type { PageRequest } from '../page.js';
import { type OrderEventType, statusEnteredBy } from '../orders/lifecycle.js';
import { eventIdOf, parseEventId } from './ids.js';
import type { Event, EventType, StoredEvent } from './schemas.js';

export interface EventFilter {
  types?: readonly EventType[];
  orderId?: number;
}

/** A page of events, and the place to go on from (its last event's, or where its walk stopped), or null at the end. */
export interface EventPage {
  events: StoredEvent[];
  next: number | null;
}

/**
 * The most events one page of a filtered listing walks past: a page may then hold fewer than asked
 * (its cursor goes on from where the walk stopped), and no request holds the store for long.
 */
export const WALK_LIMIT = 1_000;
/** Keys whose heads one query reads. */
const HEADS_AT_ONCE = 500;

/**
 * A key's events. Every query is scoped by the owner: another key's event does not exist here.
 * Events are found by walking back from the key's newest (or an order's), each to the one written
 * before it (migration 005): a page costs what it holds, however many events the store keeps.
 */
export class EventsRepository {
  constructor(private readonly db: Db) {}

  async find(owner: string, id: string): Promise<StoredEvent | undefined> {
    const named = parseEventId(id);
    if (!named) return undefined;
    const { rows } = await sql<EventRow>`select ${COLUMNS} from events e left join orders o on o.id = e.order_id
      where e.seq = ${named.seq} and e.api_key_id = ${owner} and e.nonce = ${named.nonce}`.execute(this.db);
    return rows[0] && toEvent(rows[0]);
  }

  /** An event by its place in the order of writing, as a webhook delivery names it. */
  async bySeq(seq: number): Promise<StoredEvent | undefined> {
    const { rows } =
      await sql<EventRow>`select ${COLUMNS} from events e left join orders o on o.id = e.order_id where e.seq = ${seq}`.execute(
        this.db,
      );
    return rows[0] && toEvent(rows[0]);
  }

  /**
   * One page, newest first: the events written before the cursor's (`afterId`, 0 for the newest), so
   * none is skipped or repeated however many arrive meanwhile (./record.ts says why that holds on
   * PostgreSQL too). One event beyond the limit is read, only to say whether more follow.
   */
  async list(owner: string, filter: EventFilter, page: PageRequest): Promise<EventPage> {
    if (filter.orderId !== undefined) return this.#ofOrder(owner, filter.orderId, filter.types, page);
    const matches = filter.types?.length
      ? sql<number>`case when e.type in (${sql.join(filter.types)}) then 1 else 0 end`
      : sql<number>`1`;
    const start =
      page.afterId > 0
        ? sql`(select prev_seq from events where seq = ${page.afterId} and api_key_id = ${owner})`
        : sql`(select last_seq from event_heads where api_key_id = ${owner})`;
    const want = page.limit + 1;
    const { rows } = await sql<EventRow & { prev: number | null; matched: number }>`
      with recursive walk (seq, prev, steps, found) as (
        select e.seq, e.prev_seq, 1, ${matches} from events e where e.seq = ${start} and e.api_key_id = ${owner}
        union all
        select e.seq, e.prev_seq, w.steps + 1, w.found + ${matches} from walk w join events e on e.seq = w.prev
          where w.found < ${want} and w.steps < ${WALK_LIMIT} and e.api_key_id = ${owner}
      )
      select w.prev, ${matches} as matched, ${COLUMNS} from walk w join events e on e.seq = w.seq left join orders o on o.id = e.order_id
      order by w.steps`.execute(this.db);
    const found = rows.filter((row) => row.matched === 1);
    if (found.length > page.limit)
      return { events: found.slice(0, page.limit).map(toEvent), next: found[page.limit - 1]!.seq };
    // The walk stopped at its limit with more behind: the page ends where it stopped.
    const last = rows[rows.length - 1];
    return {
      events: found.map(toEvent),
      next: last && rows.length >= WALK_LIMIT && last.prev !== null ? last.seq : null,
    };
  }

  /** The newest event of each of these keys, by its `seq` (a key with none is absent): committed ones only. */
  async heads(owners: readonly string[]): Promise<Map<string, number>> {
    const heads = new Map<string, number>();
    for (let i = 0; i < owners.length; i += HEADS_AT_ONCE) {
      const rows = await this.db
        .selectFrom('event_heads')
        .select(['api_key_id', 'last_seq'])
        .where('api_key_id', 'in', owners.slice(i, i + HEADS_AT_ONCE))
        .execute();
      for (const row of rows) heads.set(row.api_key_id, Number(row.last_seq));
    }
    return heads;
  }

  /**
   * The key's events written after the one at `after` (0: all it keeps) up to the one at `head`, oldest first, by
   * their `seq` alone: walked back from `head`, a thousand at a time. A key's events are chained, and numbered, in
   * the order they are written (migration 005; on PostgreSQL under the key's lock), so the walk stops at `after`.
   */
  async seqsBetween(owner: string, after: number, head: number): Promise<number[]> {
    const seqs: number[] = [];
    let from: number | null = head;
    while (from !== null && from > after) {
      const { rows }: { rows: { seq: number; prev: number | null }[] } = await sql<{
        seq: number;
        prev: number | null;
      }>`
        with recursive walk (seq, prev, steps) as (
          select seq, prev_seq, 1 from events where seq = ${from} and api_key_id = ${owner}
          union all
          select e.seq, e.prev_seq, w.steps + 1 from walk w join events e on e.seq = w.prev
            where w.prev > ${after} and w.steps < ${WALK_LIMIT} and e.api_key_id = ${owner}
        )
        select seq, prev from walk order by steps`.execute(this.db);
      for (const row of rows) seqs.push(Number(row.seq));
      const last: { seq: number; prev: number | null } | undefined = rows[rows.length - 1];
      from = last && rows.length >= WALK_LIMIT && last.prev !== null ? Number(last.prev) : null;
    }
    return seqs.reverse();
  }

  /** The key's events at these `seq`s, in their order. */
  async bySeqs(owner: string, seqs: readonly number[]): Promise<{ seq: number; event: StoredEvent }[]> {
    if (seqs.length === 0) return [];
    const { rows } = await sql<EventRow>`select ${COLUMNS} from events e left join orders o on o.id = e.order_id
      where e.seq in (${sql.join([...seqs])}) and e.api_key_id = ${owner} order by e.seq`.execute(this.db);
    return rows.map((row) => ({ seq: Number(row.seq), event: toEvent(row) }));
  }

  /** An order's events (three at most): walked back from its newest. */
  async #ofOrder(
    owner: string,
    orderId: number,
    types: readonly EventType[] | undefined,
    page: PageRequest,
  ): Promise<EventPage> {
    if (!canExist(orderId)) return { events: [], next: null };
    const ofTypes: RawBuilder<unknown> = types?.length ? sql`and e.type in (${sql.join(types)})` : sql``;
    const before = page.afterId > 0 ? sql`and e.seq < ${page.afterId}` : sql``;
    const { rows } = await sql<EventRow>`
      with recursive walk (seq) as (
        select last_event_seq from orders where id = ${orderId} and api_key_id = ${owner}
        union all
        select e.prev_of_order from walk w join events e on e.seq = w.seq where e.prev_of_order is not null
      )
      select ${COLUMNS} from walk w join events e on e.seq = w.seq left join orders o on o.id = e.order_id
      where e.api_key_id = ${owner} ${ofTypes} ${before}
      order by e.seq desc limit ${page.limit + 1}`.execute(this.db);
    return {
      events: rows.slice(0, page.limit).map(toEvent),
      next: rows.length > page.limit ? rows[page.limit - 1]!.seq : null,
    };
  }
}

interface EventRow {
  seq: number;
  nonce: string;
  type: EventType;
  /** JSON, for an event not about an order. */
  data: string | null;
  created_at: string;
  livemode: number;
  order_id: number;
  pet_id: number;
  quantity: number;
  ship_date: string;
}

const COLUMNS = sql`e.seq, e.nonce, e.type, e.data, e.created_at, e.livemode, e.order_id, o.pet_id, o.quantity, o.ship_date`;

/** The event as clients read it: its order as of the event is the order's row in the state the event entered. */
function toEvent(row: EventRow): StoredEvent {
  return {
    id: eventIdOf(row.seq, row.nonce),
    type: row.type,
    timestamp: row.created_at,
    livemode: row.livemode === 1,
    data: dataOf(row),
  };
}

function dataOf(row: EventRow): Event['data'] {
  if (row.data !== null) return JSON.parse(row.data) as Event['data'];
  const status = statusEnteredBy(row.type as OrderEventType);
  return {
    id: Number(row.order_id),
    petId: Number(row.pet_id),
    quantity: row.quantity,
    shipDate: row.ship_date,
    status,
  };
}
