import { afterAll, describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrations.js';
import { PET_CATALOGUE } from '../../src/pets/catalogue.js';
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
    expect(Number(n)).toBe(PET_CATALOGUE.length);
    const applied = await check
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute();
    expect(applied.map((row) => (row as { name: string }).name)).toEqual(['001_tables', '002_pet_catalogue', '003_change_notifications', '004_test_keys']);
  });
});
