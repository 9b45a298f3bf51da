import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresAvailable, type TestDatabase, testDatabase } from '../helpers/database.js';

/**
 * On PostgreSQL, each select, insert, update and delete Kysely sends is a named statement, parsed and
 * planned once per connection (src/db/named-statements.ts): PostgreSQL's own `pg_prepared_statements`
 * shows them. What is not one statement of those kinds goes unnamed and still works.
 */
const available = await postgresAvailable();

describe.skipIf(!available)('named statements on PostgreSQL', () => {
  let t: TestDatabase;
  afterAll(async () => {
    await t?.db.destroy();
    await t?.drop();
  });

  it('prepares a query once per connection and runs it again by name; other commands go as they are', async () => {
    t = await testDatabase({ kind: 'postgres' });
    const prepared = await t.db.connection().execute(async (connection) => {
      const byId = (id: number) => connection.selectFrom('pets').select(['id', 'name']).where('id', '=', id).execute();
      expect((await byId(1)).map((pet) => pet.id)).toEqual([1]);
      expect((await byId(2)).map((pet) => pet.id)).toEqual([2]);
      // Several commands in one text cannot be a prepared statement: sent unnamed, they still run.
      await sql`select 1; select 2`.execute(connection);
      const { rows } = await sql<{
        name: string;
        statement: string;
      }>`select name, statement from pg_prepared_statements`.execute(connection);
      return rows;
    });
    const pets = prepared.filter((row) => row.statement.includes('from "pets"'));
    expect(pets).toHaveLength(1);
    expect(pets[0]!.name).toMatch(/^k[A-Za-z0-9_-]{27}$/);
    expect(prepared.some((row) => row.statement.includes('select 1; select 2'))).toBe(false);
  });
});
