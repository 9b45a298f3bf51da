import SQLite from 'better-sqlite3';
import { encodeCursor } from '../src/http/pagination.js';
import { displayPrefix, generateKey, generateKeyId, hashKey } from '../src/keys/key-format.js';
import { HUGE, migratedSqliteFile } from './setup.js';

export const GROWTH = {
  keys: 1_000_000,
  /** Real keys, at random places in the table; the run's load goes over all of them. */
  usedKeys: 100_000,
  orders: 1_000_000,
  /** The deep cursor points at the owner's order of this rank: about 10,000 orders follow it. */
  deepCursorRank: 990_000,
};

export interface GrowthStore {
  file: string;
  /** The real keys (enterprise, huge limits). */
  keys: string[];
  /** The key that owns the million orders (enterprise, huge limits). */
  ordersKey: string;
  /** `encodeCursor` of the owner's order of rank `deepCursorRank`. */
  deepCursor: string;
  setupSeconds: number;
}

export async function growthStore(): Promise<GrowthStore> {
  const started = performance.now();
  const file = await migratedSqliteFile();

  const sqlite = new SQLite(file);
  try {
    // A throwaway store: a rollback journal rather than WAL while loading (WAL would write every page
    // twice; the service turns WAL on again when it opens the file), no sync to disk, foreign keys
    // unchecked (the rows are right by construction), and a cache that holds the indexes being built.
    sqlite.pragma('journal_mode = DELETE');
    sqlite.pragma('synchronous = OFF');
    sqlite.pragma('foreign_keys = OFF');
    sqlite.pragma('cache_size = -1048576');
    const now = new Date().toISOString();
    const keys = Array.from({ length: GROWTH.usedKeys }, () => generateKey());
    const ordersKey = generateKey();
    const ordersOwner = generateKeyId();
    sqlite.exec('create temp table real_keys (id text, name text, key_hash text, key_prefix text)');
    const insertReal = sqlite.prepare('insert into temp.real_keys values (?, ?, ?, ?)');
    sqlite.transaction(() => {
      for (const key of keys) insertReal.run(generateKeyId(), 'growth key', hashKey(key), displayPrefix(key));
      insertReal.run(ordersOwner, 'orders owner', hashKey(ordersKey), displayPrefix(ordersKey));
      // The fillers are made inside SQLite, their ids from their hashes, and every row goes in in
      // the order of its hash: the table and both of its unique indexes then grow at their ends (a
      // million rows in a few seconds), and the real keys land at random places through the table,
      // as keys in use would be.
      sqlite
        .prepare(
          `insert into api_keys (id, name, plan, per_minute, per_day, key_hash, key_prefix, created_at, revoked_at, unban_seq)
           select id, name, 'enterprise', ?, ?, h, prefix, ?, null, 0 from (
             select 'key_' || substr(h, 1, 16) as id, 'filler key' as name, h, 'pet_fill…' as prefix
             from (with recursive n(i) as (select 1 union all select i + 1 from n where i < ?) select lower(hex(randomblob(32))) as h from n)
             union all
             select id, name, key_hash, key_prefix from temp.real_keys)
           order by h`,
        )
        .run(HUGE, HUGE, now, GROWTH.keys - keys.length - 1);
      sqlite
        .prepare(
          `insert into orders (api_key_id, pet_id, quantity, ship_date, status, complete, created_at)
           select ?, 1 + i % 5, 1, ?, 'placed', 0, ? from (with recursive n(i) as (select 1 union all select i + 1 from n where i < ?) select i from n)`,
        )
        .run(ordersOwner, now, now, GROWTH.orders);
    })();
    const deepId = sqlite
      .prepare('select id from orders where api_key_id = ? order by id limit 1 offset ?')
      .pluck()
      .get(ordersOwner, GROWTH.deepCursorRank - 1) as number;
    return { file, keys, ordersKey, deepCursor: encodeCursor(deepId), setupSeconds: (performance.now() - started) / 1000 };
  } finally {
    sqlite.close();
  }
}
