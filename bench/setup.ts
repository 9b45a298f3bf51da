/**
 * The keys and records a run needs, written straight into the service's store (the service looks
 * keys up on every request, so it sees them at once), and the throwaway stores of a run.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { type Db, openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrations.js';
import { KeysRepository } from '../src/keys/repository.js';

/** Far beyond what a run can send, and within the column's 32-bit integer. */
export const HUGE = 2_000_000_000;
/** Orders per listing key: one full default page. */
const ORDERS_PER_KEY = 20;

export interface BenchKeys {
  /** Enterprise keys with huge limits, one set per throughput path. */
  pets: string[];
  listOrders: string[];
  placeOrders: string[];
  /** One enterprise key with huge limits that takes a whole run alone. */
  hot: string;
  /** Free keys, to be exhausted before the 429 run. */
  limited: string[];
  /** A free key, to be banned just before the banned run. */
  banned: string;
}

export async function createKeys(
  databaseUrl: string,
  counts: { perPath: number; limited: number },
): Promise<BenchKeys> {
  const db = openDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database);
  try {
    const keys = new KeysRepository(db, systemClock);
    const many = (n: number, plan: 'enterprise' | 'free') => keysOf(keys, n, plan);
    const listOrders = await many(counts.perPath, 'enterprise');
    await seedOrders(
      db,
      listOrders.map((k) => k.record.id),
    );
    return {
      pets: (await many(counts.perPath, 'enterprise')).map((k) => k.key),
      listOrders: listOrders.map((k) => k.key),
      placeOrders: (await many(counts.perPath, 'enterprise')).map((k) => k.key),
      hot: (await many(1, 'enterprise'))[0]!.key,
      limited: (await many(counts.limited, 'free')).map((k) => k.key),
      banned: (await many(1, 'free'))[0]!.key,
    };
  } finally {
    await db.destroy();
  }
}

/**
 * `n` live enterprise keys with huge limits, written straight into the (migrated) store at `databaseUrl`: for a
 * bench that needs only keys.
 */
export async function enterpriseKeys(databaseUrl: string, n: number): Promise<string[]> {
  const db = openDatabase(loadConfig({ DATABASE_URL: databaseUrl }).database);
  try {
    return (await keysOf(new KeysRepository(db, systemClock), n, 'enterprise')).map((k) => k.key);
  } finally {
    await db.destroy();
  }
}

async function keysOf(keys: KeysRepository, n: number, plan: 'enterprise' | 'free') {
  const created = [];
  for (let i = 0; i < n; i++) {
    created.push(await keys.create(plan === 'free' ? { plan } : { plan, perMinute: HUGE, perDay: HUGE }));
  }
  return created;
}

async function seedOrders(db: Db, owners: string[]): Promise<void> {
  const now = new Date().toISOString();
  const rows = owners.flatMap((owner) =>
    Array.from({ length: ORDERS_PER_KEY }, (_, i) => ({
      api_key_id: owner,
      pet_id: 1 + (i % 5),
      quantity: 1,
      ship_date: now,
      status: 'placed',
      complete: 0,
      created_at: now,
    })),
  );
  // In batches: SQLite caps the number of bound parameters per statement.
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('orders')
      .values(rows.slice(i, i + 500))
      .execute();
}

/** A fresh SQLite file with the schema the service would make (its own migrations), for a bench to fill. */
export async function migratedSqliteFile(): Promise<string> {
  const file = sqliteFile();
  const db = openDatabase(loadConfig({ DATABASE_URL: file }).database);
  await migrate(db, 'sqlite');
  await db.destroy();
  return file;
}

export function sqliteFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'petstore-bench-')), 'petstore.db');
}
