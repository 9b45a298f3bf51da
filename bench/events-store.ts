/**
 * The stores of the events phase (events.ts), written straight into SQLite, with the service's own
 * migrations: the store's triggers write the events of the orders placed (migration 005), as they
 * would for orders placed through the API. And what the phase reads back from a store once its
 * service is gone.
 */
import { DatabaseSync } from 'node:sqlite';
import { displayPrefix, generateKey, generateKeyId, hashKey } from '../src/keys/key-format.js';
import { HUGE, migratedSqliteFile } from './setup.js';

/**
 * A fresh store with `petKeys` enterprise keys and one more that placed
 * `orders` orders `ageDays` ago, all due for approval then if `due`.
 */
export async function storeWith({
  petKeys,
  orders,
  due,
  ageDays = 0,
  hook,
}: {
  petKeys: number;
  orders: number;
  due: boolean;
  ageDays?: number;
  hook?: string;
}) {
  const started = performance.now();
  const file = await migratedSqliteFile();
  const sqlite = new DatabaseSync(file);
  try {
    const now = new Date(Date.now() - ageDays * 86_400_000).toISOString();
    const insertKey = sqlite.prepare(
      `insert into api_keys (id, name, plan, per_minute, per_day, key_hash, key_prefix, created_at) values (?, 'bench', 'enterprise', ?, ?, ?, ?, ?)`,
    );
    const newKey = () => {
      const key = generateKey();
      const id = generateKeyId();
      insertKey.run(id, HUGE, HUGE, hashKey(key), displayPrefix(key), now);
      return { id, key };
    };
    const keys = Array.from({ length: petKeys }, newKey).map((k) => k.key);
    const owner = newKey();
    // An endpoint of the owner's first: the store writes a delivery to it for every event of the orders below.
    if (hook) {
      sqlite
        .prepare(
          `insert into webhook_endpoints (id, api_key_id, url, description, events, secret, livemode, created_at) values ('we_000000000000000000bench0', ?, ?, '', null, ?, 1, ?)`,
        )
        .run(owner.id, hook, `whsec_${Buffer.alloc(32, 1).toString('base64')}`, now);
    }
    sqlite.exec('begin');
    sqlite
      .prepare(
        `insert into orders (api_key_id, pet_id, quantity, ship_date, status, complete, created_at, due_at)
           select ?, 1 + i % 5, 1, ?, 'placed', 0, ?, ? from (with recursive n(i) as (select 1 union all select i + 1 from n where i < ?) select i from n)`,
      )
      .run(owner.id, now, now, due ? now : null, orders);
    sqlite.exec('commit');
    return { file, keys, owner: owner.key, dueAt: Date.parse(now), setupSeconds: (performance.now() - started) / 1000 };
  } finally {
    sqlite.close();
  }
}

/** When the last of the orders was approved, after `dueAt`, in s: read from the store once the service is gone. */
export function lastApprovalAfter(file: string, dueAt: number): number {
  const sqlite = new DatabaseSync(file, { readOnly: true });
  try {
    const last = sqlite.prepare(`select max(moved_at) as last from orders where status = 'approved'`).get()!
      .last as string;
    return Math.round((Date.parse(last) - dueAt) / 100) / 10;
  } finally {
    sqlite.close();
  }
}
