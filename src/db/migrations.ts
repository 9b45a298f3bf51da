import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import { PET_CATALOGUE } from './seed.js';
import { CHANGES_CHANNEL } from './change-feed.js';
import { currentSchema, type Db } from './database.js';
import { type Dialect, dialectOf, type Kind, required } from './migration-dialect.js';
import { orderLifecycleAndEvents, webhooks } from './event-migrations.js';
import { childTestKeys, testClocks, testScripts } from './test-mode-migrations.js';
import { oauthSigningKeys } from './oauth-migrations.js';
import { requestLog } from './request-log-migrations.js';

/**
 * Migrations live in code, in order. Kysely's migrator holds a lock while it runs (an advisory lock on
 * PostgreSQL; on SQLite, the file's write lock, taken as its transaction begins: db/sqlite.ts), so
 * instances that start at the same moment apply each migration exactly once; the pet catalogue is
 * seeded by a migration for the same reason.
 */
export function migrations(kind: Kind): Record<string, Migration> {
  const d = dialectOf(kind);
  return {
    '001_tables': tables(d),
    '002_pet_catalogue': petCatalogue(d),
    '003_change_notifications': changeNotifications(d),
    '004_test_keys': testKeys(d),
    '005_order_lifecycle_and_events': orderLifecycleAndEvents(d),
    '006_webhooks': webhooks(d),
    '007_new_key_notifications': newKeyNotifications(d),
    '008_key_versions': keyVersions(d),
    '009_idempotency_expiry': idempotencyExpiry(d),
    '010_service_secrets': serviceSecrets(d),
    '011_test_clocks': testClocks,
    '012_child_test_keys': childTestKeys,
    '013_test_scripts': testScripts,
    '014_oauth_signing_keys': oauthSigningKeys,
    '015_request_log': requestLog(d),
  };
}

const tables = (d: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .$call(required({ name: 'text', plan: 'text' }))
      .addColumn('per_minute', 'integer')
      .addColumn('per_day', 'integer')
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .$call(required({ key_prefix: 'text', created_at: 'text' }))
      .addColumn('revoked_at', 'text')
      .addColumn('unban_seq', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('pets')
      .addColumn('id', d.serialId, d.serialKey)
      .$call(
        required({
          name: 'text',
          category_id: 'integer',
          category_name: 'text',
          photo_urls: 'text',
          tags: 'text',
          status: 'text',
        }),
      )
      .execute();
    await db.schema.createIndex('pets_status_id').on('pets').columns(['status', 'id']).execute();
    await db.schema
      .createTable('orders')
      .addColumn('id', d.serialId, d.serialKey)
      .addColumn('api_key_id', 'text', (c) => c.notNull().references('api_keys.id'))
      .addColumn('pet_id', 'bigint', (c) => c.notNull().references('pets.id'))
      .$call(
        required({ quantity: 'integer', ship_date: 'text', status: 'text', complete: 'integer', created_at: 'text' }),
      )
      .execute();
    await db.schema.createIndex('orders_owner_id').on('orders').columns(['api_key_id', 'id']).execute();
    await db.schema
      .createTable('idempotency_records')
      .$call(required({ api_key_id: 'text', idempotency_key: 'text', request_hash: 'text' }))
      .addColumn('order_id', 'bigint', (c) => c.notNull().references('orders.id'))
      .$call(required({ response_body: 'text', created_at: 'text' }))
      .addPrimaryKeyConstraint('idempotency_records_pk', ['api_key_id', 'idempotency_key'])
      .execute();
  },
});

const petCatalogue = (_d: Dialect): Migration => ({
  async up(db: Kysely<unknown>) {
    const rows = PET_CATALOGUE.map((pet) => ({
      name: pet.name,
      category_id: pet.category.id,
      category_name: pet.category.name,
      photo_urls: JSON.stringify(pet.photos.map((photo) => photo.url)),
      tags: JSON.stringify(pet.tags),
      status: pet.status,
    }));
    await (db as Db).insertInto('pets').values(rows).execute();
  },
});

const changeNotifications = (d: Dialect): Migration => ({
  // PostgreSQL tells every listening instance which cached row changed, whoever changed it (an
  // instance, the CLI, an operator's SQL): see change-feed.ts. New rows need no notice: nothing
  // caches their absence (until 007). SQLite needs nothing here: `PRAGMA data_version` covers it.
  async up(db: Kysely<unknown>) {
    if (d.kind !== 'postgres') return;
    await sql`
      create or replace function notify_change() returns trigger language plpgsql as $$
      declare
        changed text;
      begin
        if tg_op = 'DELETE' then changed := old.id::text; else changed := new.id::text; end if;
        perform pg_notify(${sql.lit(CHANGES_CHANNEL)}, tg_table_schema || ' ' || tg_table_name || ' ' || changed);
        return null;
      end $$`.execute(db);
    for (const table of ['api_keys', 'pets']) {
      await sql`create trigger ${sql.id(`${table}_changed`)} after update or delete on ${sql.table(table)}
        for each row execute function notify_change()`.execute(db);
    }
  },
});

const testKeys = (_d: Dialect): Migration => ({
  // A test key (faults/): `test` is 1 for a `pet_test_…` key; `fault_profile` its standing fault
  // profile as JSON (faults/profile.ts), or null. Existing keys are live keys without a profile.
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('api_keys')
      .addColumn('test', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('api_keys').addColumn('fault_profile', 'text').execute();
  },
});

const newKeyNotifications = (d: Dialect): Migration => ({
  // Each instance now knows which keys exist (keys/known-keys.ts), so a new key is news too: every
  // listening instance hears of it, as of a changed one, and looks it up from then on.
  async up(db: Kysely<unknown>) {
    if (d.kind !== 'postgres') return;
    await sql`create trigger api_keys_created after insert on api_keys for each row execute function notify_change()`.execute(
      db,
    );
  },
});

const keyVersions = (_d: Dialect): Migration => ({
  // The version a key is pinned to (versions/, docs/versions.md). Keys made before versions existed get
  // the first, which their clients were written for; a new key is given the newest when it is made.
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('api_keys')
      .addColumn('api_version', 'text', (c) => c.notNull().defaultTo('2025-06-01'))
      .execute();
  },
});

const idempotencyExpiry = (_d: Dialect): Migration => ({
  // Records that left the Idempotency-Key window are deleted, oldest first (idempotency/expiry.ts).
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('idempotency_records_created_at')
      .on('idempotency_records')
      .column('created_at')
      .execute();
  },
});

const serviceSecrets = (_d: Dialect): Migration => ({
  // Secrets of the service itself, made once with the store so that every instance on it shares them:
  // `cursors` signs the cursors of collections (http/pagination.ts,
  // docs/calling-the-api.md#collections-and-pagination).
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('service_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .$call(required({ value: 'text' }))
      .execute();
    await db
      .insertInto('service_secrets' as never)
      .values({ name: 'cursors', value: randomBytes(32).toString('base64') } as never)
      .execute();
  },
});

export async function migrate(db: Db, kind: Kind): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations(kind) },
    // Kysely looks for its own tables in every schema unless told which: name the one in use.
    migrationTableSchema: kind === 'postgres' ? await currentSchema(db) : undefined,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}
