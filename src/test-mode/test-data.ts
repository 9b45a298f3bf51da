import type { ChangeFeed } from '../db/change-feed.js';
import type { Db } from '../db/database.js';
import { transactionsOf } from '../db/group-commit.js';
import type { KeysRepository } from '../keys/repository.js';
import { keyCaller, restampKeys } from '../ratelimit/callers.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { TestClocks } from './clocks.js';
import type { TestDataRemoved } from './schemas.js';

export interface TestDataDeps {
  db: Db;
  changes: ChangeFeed;
  limiter: LimiterStore;
  clocks: TestClocks;
  keys: KeysRepository;
  /** What other components keep of a test key (its script, scenarios/), removed with its records. */
  alsoRemove?: readonly ((trx: Db, keyId: string) => Promise<void>)[];
}

/**
 * What a test key made, and how it starts over (docs/testing-clients.md#testing-your-client-in-seconds). Its records go
 * in one transaction (deliveries, endpoints, Idempotency-Key records, events and their chain's head, orders, its
 * clock, and what other components keep of it: its script); then its windows, ban and ban history (the limiter's state), its pages held in memory (a new stamp)
 * and its fault sequence. Every statement names the key: nothing of any other key is touched.
 */
export class TestData {
  readonly #restamp: (keyIds: readonly string[]) => Promise<void>;

  constructor(private readonly deps: TestDataDeps) {
    this.#restamp = restampKeys(deps.limiter, deps.changes);
  }

  /**
   * The key starts over as a new key of its plan, and its children
   * (and theirs) are deleted. Answers what it removed of its own.
   */
  async reset(keyId: string, faults: boolean): Promise<TestDataRemoved> {
    const removed = await this.#startOver(keyId);
    if (faults) await this.deps.keys.restartFaults(keyId);
    for (const child of await childrenOf(this.deps.db, keyId)) await this.delete(child);
    return removed;
  }

  /**
   * A child key deleted: its data, its children, and the key itself (revoked: it answers `401` from its next request).
   */
  async delete(keyId: string): Promise<void> {
    await this.reset(keyId, false);
    await this.deps.keys.revoke(keyId);
  }

  async #startOver(keyId: string): Promise<TestDataRemoved> {
    const { db, changes, limiter, clocks, alsoRemove = [] } = this.deps;
    const removed = await transactionsOf(db).run(async (trx) => {
      for (const remove of alsoRemove) await remove(trx, keyId);
      return removeAll(trx, keyId, clocks);
    });
    changes.changed('orders', keyId);
    await Promise.all([limiter.forget(keyCaller(keyId)), this.#restamp([keyId])]);
    return removed;
  }
}

/** A test key's children that are alive (not deleted), oldest first. */
export async function childrenOf(db: Db, parentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select('id')
    .where('parent_id', '=', parentId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => row.id);
}

/** Every record of the key's, in an order its references allow. */
async function removeAll(trx: Db, keyId: string, clocks: TestClocks): Promise<TestDataRemoved> {
  const count = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);
  const endpoints = trx.selectFrom('webhook_endpoints').select('id').where('api_key_id', '=', keyId);
  const deliveries = count(
    await trx.deleteFrom('webhook_deliveries').where('endpoint_id', 'in', endpoints).executeTakeFirstOrThrow(),
  );
  const webhookEndpoints = count(
    await trx.deleteFrom('webhook_endpoints').where('api_key_id', '=', keyId).executeTakeFirstOrThrow(),
  );
  await trx.deleteFrom('idempotency_records').where('api_key_id', '=', keyId).execute();
  const events = count(await trx.deleteFrom('events').where('api_key_id', '=', keyId).executeTakeFirstOrThrow());
  await trx.deleteFrom('event_heads').where('api_key_id', '=', keyId).execute();
  const orders = count(await trx.deleteFrom('orders').where('api_key_id', '=', keyId).executeTakeFirstOrThrow());
  await clocks.clear(trx, keyId);
  return { orders, events, webhookEndpoints, deliveries };
}
