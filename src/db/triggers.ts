import { type Expression, type Kysely, sql } from 'kysely';

type Kind = 'sqlite' | 'postgres';

/**
 * The store writes the event of every placement and every move of an order (docs/orders-and-events.md), in the
 * statement that makes the change, so that no writer (the service, an operator's SQL) can make one
 * without the other: `order.<state>`, at the order's `created_at` or `moved_at`, live unless the key is
 * a test key (orders/lifecycle.ts names the same types; events/repository.ts reads them back).
 *
 * Events are appended in the order of `seq`, each pointing to its key's previous event and to its
 * order's; the key's newest (`event_heads`) and the order's (`orders.last_event_seq`) follow every
 * event written. A key's events are read by walking back from its newest (events/repository.ts): an
 * index of events by key would cost every order placed a page of the write-ahead log of its own (a
 * leaf per key), where the heads' few pages are shared. Written by the store, in the change's own
 * statement, because a statement of their own made placing an order far slower
 * (docs/performance.md#background-work).
 */
/** What follows every event written: the key's newest, and the order's. */
const FOLLOW = sql`
  insert into event_heads (api_key_id, last_seq) values (new.api_key_id, new.seq) on conflict (api_key_id) do update set last_seq = excluded.last_seq;
  update orders set last_event_seq = new.seq where id = new.order_id;`;

export async function eventTriggers(db: Kysely<unknown>, kind: Kind): Promise<void> {
  await (kind === 'sqlite' ? sqliteEventTriggers(db) : postgresEventTriggers(db));
}

async function sqliteEventTriggers(db: Kysely<unknown>): Promise<void> {
  const record = (type: Expression<unknown>, at: Expression<unknown>, prevOfOrder: Expression<unknown>) => sql`
    insert into events (nonce, prev_seq, prev_of_order, api_key_id, order_id, type, created_at, livemode) values (
      lower(hex(randomblob(6))), (select last_seq from event_heads where api_key_id = new.api_key_id), ${prevOfOrder},
      new.api_key_id, new.id, ${type}, ${at}, (select 1 - test from api_keys where id = new.api_key_id));`;
  await sql`create trigger order_placed after insert on orders begin ${record(sql`'order.placed'`, sql`new.created_at`, sql`null`)} end`.execute(
    db,
  );
  // A move written by hand, without its time, is recorded at the store's.
  const movedAt = sql`coalesce(new.moved_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;
  await sql`create trigger order_moved after update of status on orders when new.status is not old.status
    begin ${record(sql`'order.' || new.status`, movedAt, sql`new.last_event_seq`)} end`.execute(db);
  await sql`create trigger event_written after insert on events begin ${FOLLOW} end`.execute(db);
}

/**
 * The same on PostgreSQL. Before reading the key's newest event the trigger takes the key's transaction
 * lock (advisory, held to the commit), so that for one key events are chained, and become visible, in
 * the order they were written (./key-locks.ts: a writer of many keys' events takes them first).
 */
async function postgresEventTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`create or replace function order_event() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE' and new.status is not distinct from old.status then return null; end if;
      perform pg_advisory_xact_lock(hashtextextended(new.api_key_id, 0));
      insert into events (nonce, prev_seq, prev_of_order, api_key_id, order_id, type, created_at, livemode) values (
        substr(md5(random()::text), 1, 12), (select last_seq from event_heads where api_key_id = new.api_key_id),
        case when tg_op = 'INSERT' then null else new.last_event_seq end,
        new.api_key_id, new.id, 'order.' || new.status,
        case when tg_op = 'INSERT' then new.created_at
          else coalesce(new.moved_at, to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) end,
        (select 1 - test from api_keys where id = new.api_key_id));
      return null;
    end $$`.execute(db);
  await sql`create trigger order_event after insert or update of status on orders for each row execute function order_event()`.execute(
    db,
  );
  await sql`create or replace function event_written() returns trigger language plpgsql as $$ begin ${FOLLOW} return null; end $$`.execute(
    db,
  );
  await sql`create trigger event_written after insert on events for each row execute function event_written()`.execute(
    db,
  );
}

/**
 * Migration 006: every event written also writes one pending delivery per endpoint of its key that is
 * enabled and subscribed to its type, due at once (webhooks/dispatcher.ts sends them). `webhook.test`
 * is the one event sent to the endpoint that asked for it alone (webhooks/test.ts writes its delivery).
 */
export async function deliveryTriggers(db: Kysely<unknown>, kind: Kind): Promise<void> {
  const fanOut = sql`
    insert into webhook_deliveries (endpoint_id, event_seq, state, attempts, attempt_count, next_attempt_at, created_at)
      select e.id, new.seq, 'pending', '[]', 0, new.created_at, new.created_at from webhook_endpoints e
      where e.api_key_id = new.api_key_id and e.enabled = 1 and new.type <> 'webhook.test'
        and (e.events is null or e.events like '%,' || new.type || ',%');`;
  if (kind === 'sqlite') {
    await sql`drop trigger event_written`.execute(db);
    await sql`create trigger event_written after insert on events begin ${FOLLOW} ${fanOut} end`.execute(db);
    return;
  }
  await sql`create or replace function event_written() returns trigger language plpgsql as $$ begin ${FOLLOW} ${fanOut} return null; end $$`.execute(
    db,
  );
}
