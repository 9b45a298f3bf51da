import { afterAll, describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../src/db/database.js';
import { Migrator } from 'kysely';
import { migrate, migrations } from '../../src/db/migrations.js';
import { serviceSecret } from '../../src/db/secrets.js';
import { PET_CATALOGUE } from '../../src/db/seed.js';
import type { Pet } from '../../src/pets/schemas.js';

// The seed's pets are the API's pets: `npm test` type-checks this line first.
const SEEDED: ReadonlyArray<Omit<Pet, 'id'>> = PET_CATALOGUE;
import { OLDEST_VERSION } from '../../src/versions/versions.js';
import { postgresAvailable, testDatabase } from '../helpers/database.js';

const available = await postgresAvailable();

describe.skipIf(!available)('PostgreSQL migrations', () => {
  const opened: Db[] = [];
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    await Promise.all(opened.map((db) => db.destroy()));
    for (const drop of drops) await drop();
  });

  it('are safe when several instances start at the same moment: each applied once, the catalogue seeded once', async () => {
    // An empty schema of our own, then eight "instances" migrating it at once, each on its own pool.
    const { db, url, drop } = await testDatabase({ kind: 'postgres' });
    drops.push(drop);
    await db.schema.dropTable('request_log').execute();
    await db.schema.dropTable('oauth_signing_keys').execute();
    await db.schema.dropTable('test_script_uses').execute();
    await db.schema.dropTable('test_scripts').execute();
    await db.schema.dropTable('test_clocks').execute();
    await db.schema.dropTable('service_secrets').execute();
    await db.schema.dropTable('webhook_deliveries').execute();
    await db.schema.dropTable('webhook_endpoints').execute();
    await db.schema.dropTable('event_heads').execute();
    await db.schema.dropTable('events').execute();
    await db.schema.dropTable('idempotency_records').execute();
    await db.schema.dropTable('orders').execute();
    await db.schema.dropTable('pets').execute();
    await db.schema.dropTable('api_keys').execute();
    await db.deleteFrom('kysely_migration' as never).execute();
    await db.destroy();

    const instances = Array.from({ length: 8 }, () => openDatabase({ kind: 'postgres', url }));
    opened.push(...instances);
    await Promise.all(instances.map((instance) => migrate(instance, 'postgres')));

    const check = instances[0]!;
    const { n } = await check
      .selectFrom('pets')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(SEEDED.length);
    const applied = await check
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute();
    expect(applied.map((row) => (row as { name: string }).name)).toEqual([
      '001_tables',
      '002_pet_catalogue',
      '003_change_notifications',
      '004_test_keys',
      '005_order_lifecycle_and_events',
      '006_webhooks',
      '007_new_key_notifications',
      '008_key_versions',
      '009_idempotency_expiry',
      '010_service_secrets',
      '011_test_clocks',
      '012_child_test_keys',
      '013_test_scripts',
      '014_oauth_signing_keys',
      '015_request_log',
    ]);
  });
});

/** A key as the migrations before 008 made it (no version, no test flag): `key_1`, made at `at`. */
async function insertOldKey(db: Db, at: string): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: 'key_1',
      name: 'k',
      plan: 'pro',
      per_minute: null,
      per_day: null,
      key_hash: 'h',
      key_prefix: 'pet_x…',
      created_at: at,
      revoked_at: null,
    })
    .execute();
}

describe('the order lifecycle migration (005)', () => {
  it('keeps every idempotency record and makes the orders placed before it due for approval at once', async () => {
    const db = openDatabase({ kind: 'sqlite', file: ':memory:' });
    try {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations('sqlite') } });
      expect((await migrator.migrateTo('004_test_keys')).error).toBeUndefined();
      const at = '2026-11-01T10:00:00.000Z';
      await insertOldKey(db, at);
      const order = { api_key_id: 'key_1', pet_id: 1, quantity: 1, ship_date: at, complete: 0, created_at: at };
      await db
        .insertInto('orders')
        .values([
          { ...order, status: 'placed' },
          { ...order, status: 'cancelled' },
        ] as never)
        .execute();
      const record = {
        api_key_id: 'key_1',
        idempotency_key: 'k1',
        request_hash: 'hash',
        order_id: 1,
        response_body: '{"id":1}',
        created_at: at,
      };
      await db
        .insertInto('idempotency_records')
        .values(record as never)
        .execute();

      await migrate(db, 'sqlite');
      expect(await db.selectFrom('orders').select(['id', 'status', 'due_at']).orderBy('id').execute()).toEqual([
        { id: 1, status: 'placed', due_at: at },
        { id: 2, status: 'cancelled', due_at: null },
      ]);
      expect(await db.selectFrom('idempotency_records').selectAll().execute()).toEqual([{ ...record, status: 201 }]);
    } finally {
      await db.destroy();
    }
  });
});

describe('the key versions migration (008)', () => {
  it('pins the keys made before versions to the first version, which their clients were written for', async () => {
    const db = openDatabase({ kind: 'sqlite', file: ':memory:' });
    try {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations('sqlite') } });
      expect((await migrator.migrateTo('007_new_key_notifications')).error).toBeUndefined();
      const at = '2026-11-01T10:00:00.000Z';
      await insertOldKey(db, at);
      await migrate(db, 'sqlite');
      expect(await db.selectFrom('api_keys').select(['id', 'api_version']).execute()).toEqual([
        { id: 'key_1', api_version: OLDEST_VERSION },
      ]);
    } finally {
      await db.destroy();
    }
  });
});

describe('the service secrets', () => {
  it('are made once for each store, at random: two new stores sign cursors with different 32-byte secrets', async () => {
    const stores = [
      openDatabase({ kind: 'sqlite', file: ':memory:' }),
      openDatabase({ kind: 'sqlite', file: ':memory:' }),
    ];
    try {
      const secrets = [];
      for (const db of stores) {
        await migrate(db, 'sqlite');
        secrets.push(await serviceSecret(db, 'cursors'));
      }
      expect(secrets.map((s) => s.length)).toEqual([32, 32]);
      expect(secrets[0]!.equals(secrets[1]!)).toBe(false);
    } finally {
      await Promise.all(stores.map((db) => db.destroy()));
    }
  });
});
