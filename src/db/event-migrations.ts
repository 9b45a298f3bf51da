import { type Kysely, type Migration, sql } from 'kysely';
import { type Dialect, required } from './migration-dialect.js';
import { deliveryTriggers, eventTriggers } from './triggers.js';

/**
 * The migrations of orders' moves, their events and their webhooks (005, 006; listed in ./migrations.ts): the
 * store writes an order's event, and each event's deliveries, itself, by its triggers (./triggers.ts).
 */

export const orderLifecycleAndEvents = (d: Dialect): Migration => ({
  // Orders move (orders/lifecycle.ts): `due_at` is when an order's next move falls due by itself,
  // null when none will; the partial index holds only the orders still moving, so the fulfilment's
  // one query finds what is due without reading the rest. Orders placed before they could move
  // are due for approval at once. `moved_at` is when the order entered its state.
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('orders').addColumn('due_at', 'text').execute();
    await db.schema.alterTable('orders').addColumn('moved_at', 'text').execute();
    await db.schema.alterTable('orders').addColumn('last_event_seq', 'bigint').execute();
    await db.schema
      .createIndex('orders_due')
      .on('orders')
      .column('due_at')
      .where(sql.ref('due_at'), 'is not', null)
      .execute();
    await sql`update orders set due_at = created_at where status = 'placed'`.execute(db);
    await db.schema
      .createTable('events')
      .addColumn('seq', d.serialId, d.serialKey)
      // Random: with `seq`, the event's id (events/ids.ts), which no other store gives again.
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('prev_seq', 'bigint')
      .addColumn('prev_of_order', 'bigint')
      .addColumn('api_key_id', 'text', (c) => c.notNull().references('api_keys.id'))
      .addColumn('order_id', 'bigint')
      .$call(required({ type: 'text', created_at: 'text', livemode: 'integer' }))
      .execute();
    await db.schema
      .createTable('event_heads')
      .addColumn('api_key_id', 'text', (c) => c.primaryKey())
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      // SQLite keeps the rows in their key's order, with no table beside the key's index.
      .$call((table) => (d.kind === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table))
      .execute();
    await eventTriggers(db, d.kind);
    // Every POST that creates or changes something honours Idempotency-Key (idempotency/): a record
    // keeps its response's status, and names an order only when there is one.
    await db.schema
      .createTable('idempotency_records_005')
      .$call(required({ api_key_id: 'text', idempotency_key: 'text', request_hash: 'text', status: 'integer' }))
      .addColumn('order_id', 'bigint', (c) => c.references('orders.id'))
      .$call(required({ response_body: 'text', created_at: 'text' }))
      .addPrimaryKeyConstraint('idempotency_pk', ['api_key_id', 'idempotency_key'])
      .execute();
    await sql`insert into idempotency_records_005 (api_key_id, idempotency_key, request_hash, status, order_id, response_body, created_at)
      select api_key_id, idempotency_key, request_hash, 201, order_id, response_body, created_at from idempotency_records`.execute(
      db,
    );
    await db.schema.dropTable('idempotency_records').execute();
    await db.schema.alterTable('idempotency_records_005').renameTo('idempotency_records').execute();
  },
});

export const webhooks = (d: Dialect): Migration => ({
  // Webhook endpoints, and one delivery per event and subscribed endpoint, written by the store in
  // the event's statement (./triggers.ts): an event committed is delivered to every endpoint that
  // was subscribed when it was written. `data` holds what an event not about an order carries.
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('events').addColumn('data', 'text').execute();
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('api_key_id', 'text', (c) => c.notNull().references('api_keys.id'))
      .$call(required({ url: 'text', description: 'text' }))
      // `,order.placed,order.approved,`: the types sent; null for every type.
      .addColumn('events', 'text')
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('disabled_reason', 'text')
      .addColumn('secret', 'text', (c) => c.notNull())
      // The secret before the last rotation, which signs beside the new one until `previous_until`.
      .addColumn('previous_secret', 'text')
      .addColumn('previous_until', 'text')
      .addColumn('failed_in_row', 'integer', (c) => c.notNull().defaultTo(0))
      .$call(required({ livemode: 'integer', created_at: 'text' }))
      .execute();
    await db.schema.createIndex('webhook_endpoints_owner').on('webhook_endpoints').column('api_key_id').execute();
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('seq', d.serialId, d.serialKey)
      .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
      .addColumn('event_seq', 'bigint', (c) => c.notNull())
      .$call(required({ state: 'text', attempts: 'text', attempt_count: 'integer' }))
      // When the next attempt is due (null once done), and until when an instance has it in hand.
      .addColumn('next_attempt_at', 'text')
      .addColumn('claimed_until', 'text')
      .$call(required({ created_at: 'text' }))
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_due')
      .on('webhook_deliveries')
      .column('next_attempt_at')
      .where(sql.ref('state'), '=', 'pending')
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_endpoint')
      .on('webhook_deliveries')
      .columns(['endpoint_id', 'seq'])
      .execute();
    await deliveryTriggers(db, d.kind);
  },
});
