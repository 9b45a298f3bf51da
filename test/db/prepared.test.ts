import { afterAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { prepared } from '../../src/db/prepared.js';
import { postgresAvailable, type TestDatabase, testDatabase } from '../helpers/database.js';

const opened: TestDatabase[] = [];
afterAll(async () => {
  for (const t of opened) {
    await t.db.destroy();
    await t.drop();
  }
});

async function store(kind: 'sqlite' | 'postgres'): Promise<Db> {
  const t = await testDatabase({ kind });
  opened.push(t);
  return t.db;
}

type Key = { id: string; name: string; plan: string; hash: string };
const insertKey = prepared(['id', 'name', 'plan', 'hash'], (db, key: Key) =>
  db
    .insertInto('api_keys')
    .values({
      id: key.id,
      name: key.name,
      plan: key.plan,
      key_hash: key.hash,
      key_prefix: key.name,
      created_at: key.name,
    })
    .returning(['id', 'plan']),
);

const keysIn = (db: Db) => db.selectFrom('api_keys').select(['id', 'name', 'plan', 'key_hash']).orderBy('id').execute();

const kinds: ('sqlite' | 'postgres')[] = (await postgresAvailable()) ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(kinds)('a query compiled once, on the %s store', (kind) => {
  it("sends each call's own values, in their columns, in a transaction as outside one", async () => {
    const db = await store(kind);
    expect((await insertKey(db, kind, { id: 'key_1', name: 'one', plan: 'free', hash: 'h1' })).rows).toEqual([
      { id: 'key_1', plan: 'free' },
    ]);
    await db
      .transaction()
      .execute((trx) => insertKey(trx, kind, { hash: 'h2', plan: 'pro', name: 'two', id: 'key_2' }));
    expect(await keysIn(db)).toEqual([
      { id: 'key_1', name: 'one', plan: 'free', key_hash: 'h1' },
      { id: 'key_2', name: 'two', plan: 'pro', key_hash: 'h2' },
    ]);
  });
});

it('refuses a query with a value that is not one of its arguments', async () => {
  const db = await store('sqlite');
  const freeKey = prepared(['id', 'name', 'hash'], (db, key: Omit<Key, 'plan'>) =>
    db.insertInto('api_keys').values({
      id: key.id,
      name: key.name,
      plan: 'free',
      key_hash: key.hash,
      key_prefix: key.name,
      created_at: key.name,
    }),
  );
  // A mistake in the code, said at the query's first use.
  expect(() => freeKey(db, 'sqlite', { id: 'key_1', name: 'one', hash: 'h1' })).toThrow(/is not one of its arguments/);
  expect(await keysIn(db)).toEqual([]);
});
