/**
 * Growth, on a store of its own and a service of its own: a million keys, one of which owns a million
 * orders. The store is written straight into SQLite (`growthStore`), out of every timed part.
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Cursors, scopeOf } from '../src/http/pagination.js';
import { displayPrefix, generateKey, generateKeyId, hashKey } from '../src/keys/key-format.js';
import { type ByTurns, byTurns, type LoadSettings, oneAtATime, type Requests, sendAll, spread } from './load.js';
import { get, PATHS, type RowRunner } from './mode-run.js';
import { type Proc, startService } from './service.js';
import { HUGE, migratedSqliteFile } from './setup.js';

export const GROWTH = {
  keys: 1_000_000,
  /** Real keys, at random places in the table; the run's load goes over all of them. */
  usedKeys: 100_000,
  orders: 1_000_000,
  /** The deep cursor points at the owner's order of this rank: about 10,000 orders follow it. */
  deepCursorRank: 990_000,
};
/** `GET /pets/{petId}` over 100,000 of a million keys against the small store, by turns: rounds, seconds per turn. */
const GROWTH_ROUNDS = 4;
const GROWTH_TURN_SECONDS = 3;

export interface GrowthStore {
  file: string;
  /** The real keys (enterprise, huge limits). */
  keys: string[];
  /** The key that owns the million orders (enterprise, huge limits). */
  ordersKey: string;
  /** The cursor, as the service signs it, after the owner's order of rank `deepCursorRank`. */
  deepCursor: string;
  setupSeconds: number;
}

export interface GrowthFigures {
  keys: number;
  usedKeys: number;
  orders: number;
  /** Writing the store, before the service starts: out of every timed part. */
  setupSeconds: number;
  /** The untimed pass that sends every one of the used keys once: the service meets each for the first time. */
  firstSightSeconds: number;
  /** The service's RSS before that pass and after the timed run over the same keys. */
  rssBeforeBytes: number;
  rssAfterBytes: number;
  /** (after − before) ÷ used keys: with a key cache, the memory per cached key. */
  rssBytesPerKey: number;
  /**
   * req/s of `GET /pets/{petId}` over the used keys of the big store, over a service's on the small
   * store over its 500 keys, by turns, both sent alike (`spread`: a key per request). Measured as two
   * rows minutes apart, the pair moved by the machine's drift, and by the load generator's work: the
   * small-store row sends a fixed list, which costs autocannon less per request.
   */
  manyKeysByTurns?: ByTurns;
}

export async function growthStore(): Promise<GrowthStore> {
  const started = performance.now();
  const file = await migratedSqliteFile();

  const sqlite = new DatabaseSync(file);
  try {
    // A throwaway store: a rollback journal rather than WAL while loading (WAL would write every page
    // twice; the service turns WAL on again when it opens the file), no sync to disk, foreign keys
    // unchecked (the rows are right by construction), and a cache that holds the indexes being built.
    sqlite.exec('PRAGMA journal_mode = DELETE');
    sqlite.exec('PRAGMA synchronous = OFF');
    sqlite.exec('PRAGMA foreign_keys = OFF');
    sqlite.exec('PRAGMA cache_size = -1048576');
    const now = new Date().toISOString();
    const keys = Array.from({ length: GROWTH.usedKeys }, () => generateKey());
    const ordersKey = generateKey();
    const ordersOwner = generateKeyId();
    sqlite.exec('create temp table real_keys (id text, name text, key_hash text, key_prefix text)');
    const insertReal = sqlite.prepare('insert into temp.real_keys values (?, ?, ?, ?)');
    sqlite.exec('begin');
    for (const key of keys) insertReal.run(generateKeyId(), 'growth key', hashKey(key), displayPrefix(key));
    insertReal.run(ordersOwner, 'orders owner', hashKey(ordersKey), displayPrefix(ordersKey));
    insertKeysWithFillers(sqlite, now, GROWTH.keys - keys.length - 1);
    insertOrders(sqlite, ordersOwner, now);
    sqlite.exec('commit');
    const deep = sqlite
      .prepare('select id from orders where api_key_id = ? order by id limit 1 offset ?')
      .get(ordersOwner, GROWTH.deepCursorRank - 1);
    const secret = sqlite.prepare("select value from service_secrets where name = 'cursors'").get()!.value as string;
    const deepCursor = new Cursors(Buffer.from(secret, 'base64')).encode(
      deep!.id as number,
      scopeOf('orders', ordersOwner, { status: undefined }),
    );
    return { file, keys, ordersKey, deepCursor, setupSeconds: (performance.now() - started) / 1000 };
  } finally {
    sqlite.close();
  }
}

/** The keys of `temp.real_keys` and `fillers` more into `api_keys`, all enterprise with huge limits. */
function insertKeysWithFillers(sqlite: DatabaseSync, now: string, fillers: number): void {
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
    .run(HUGE, HUGE, now, fillers);
}

/** The owner's million orders, placed `now`. */
function insertOrders(sqlite: DatabaseSync, owner: string, now: string): void {
  sqlite
    .prepare(
      `insert into orders (api_key_id, pet_id, quantity, ship_date, status, complete, created_at)
       select ?, 1 + i % 5, 1, ?, 'placed', 0, ? from (with recursive n(i) as (select 1 union all select i + 1 from n where i < ?) select i from n)`,
    )
    .run(owner, now, now, GROWTH.orders);
}

/**
 * Growth, on a store of its own (`growthStore`) and a service of its own: one key's million orders, a
 * page at the start and one near the end; then `GET /pets/{petId}` spread evenly over 100,000 of the
 * million keys, after an untimed pass that shows the service each of them once, with the service's
 * RSS before that pass and after the run.
 */
export async function measureGrowth(
  mode: string,
  env: Record<string, string>,
  settings: LoadSettings,
  row: RowRunner,
  smallKeys: string[],
): Promise<GrowthFigures> {
  const store = await growthStore();
  process.stderr.write(
    `  ${mode}: growth set-up: ${GROWTH.keys.toLocaleString('en')} keys and ${GROWTH.orders.toLocaleString('en')} orders written in ${store.setupSeconds.toFixed(1)} s\n`,
  );
  const service = await startService({ ...env, DATABASE_URL: store.file });
  try {
    await measureOrderPages(service, store, row);
    const requests = spread('/pets/1', store.keys);
    const rssBeforeBytes = service.rssBytes();
    const firstSight = await sendAll(service.url, requests, store.keys.length, settings.connections);
    if (firstSight.statuses[200] !== store.keys.length || firstSight.errors > 0) {
      throw new Error(
        `the first sight of ${store.keys.length} keys answered ${JSON.stringify(firstSight.statuses)}, ${firstSight.errors} errors`,
      );
    }
    await row(service, PATHS.manyKeys, 200, requests);
    const rssAfterBytes = service.rssBytes();
    // The same against the small store, by turns, both sent alike.
    const manyKeysByTurns = await manyKeysAgainstSmallStore(mode, env, settings, service, requests, smallKeys);
    const growth: GrowthFigures = {
      keys: GROWTH.keys,
      usedKeys: store.keys.length,
      orders: GROWTH.orders,
      setupSeconds: Math.round(store.setupSeconds * 10) / 10,
      firstSightSeconds: Math.round(firstSight.seconds * 10) / 10,
      rssBeforeBytes,
      rssAfterBytes,
      rssBytesPerKey: Math.round((rssAfterBytes - rssBeforeBytes) / store.keys.length),
      manyKeysByTurns,
    };
    process.stderr.write(`  ${mode}: ${growthLine(growth)}\n`);
    return growth;
  } finally {
    await service.stop();
    rmSync(dirname(store.file), { recursive: true, force: true });
  }
}

/** The owner's first page of orders and one at the deep cursor: each checked full, then each a row. */
async function measureOrderPages(service: Proc, store: GrowthStore, row: RowRunner): Promise<void> {
  const owner = [store.ordersKey];
  for (const path of ['/store/orders', `/store/orders?cursor=${store.deepCursor}`]) {
    const page = (await (
      await fetch(`${service.url}${path}`, { headers: { 'x-api-key': store.ordersKey } })
    ).json()) as { data?: unknown[] };
    if (page.data?.length !== 20)
      throw new Error(`${path} did not answer a full page: ${JSON.stringify(page).slice(0, 300)}`);
  }
  await row(service, PATHS.ordersFirstPage, 200, get('/store/orders', owner));
  await row(service, PATHS.ordersDeepCursor, 200, get(`/store/orders?cursor=${store.deepCursor}`, owner));
}

/**
 * `GET /pets/{petId}` over the big store's used keys (`requests`, on `big`) against the same over the
 * small store's keys, by turns, both sent alike.
 */
async function manyKeysAgainstSmallStore(
  mode: string,
  env: Record<string, string>,
  settings: LoadSettings,
  big: Proc,
  requests: Requests,
  smallKeys: string[],
): Promise<ByTurns> {
  const small = await startService(env);
  let manyKeysByTurns: ByTurns;
  try {
    const smallRequests = spread('/pets/1', smallKeys);
    await oneAtATime(small.url, smallRequests, smallKeys.length);
    manyKeysByTurns = await byTurns(
      small,
      big,
      { a: smallRequests, b: requests },
      settings.connections,
      GROWTH_ROUNDS,
      GROWTH_TURN_SECONDS,
    );
  } finally {
    await small.stop();
  }
  process.stderr.write(
    `  ${mode}: ${PATHS.manyKeys} ÷ the small store by turns: median ${manyKeysByTurns.median} (${manyKeysByTurns.ratios.join(', ')})\n`,
  );
  return manyKeysByTurns;
}

/** The growth figures in a sentence, for the console. */
export function growthLine(g: GrowthFigures): string {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
  return (
    `growth: store of ${g.keys.toLocaleString('en')} keys and ${g.orders.toLocaleString('en')} orders written in ${g.setupSeconds} s; ` +
    `first sight of ${g.usedKeys.toLocaleString('en')} keys ${g.firstSightSeconds} s; ` +
    `RSS ${mb(g.rssBeforeBytes)} → ${mb(g.rssAfterBytes)}: ${g.rssBytesPerKey.toLocaleString('en')} bytes of RSS per key seen`
  );
}
