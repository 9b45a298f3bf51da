import type { ChangeFeed } from '../db/change-feed.js';
import type { Db } from '../db/database.js';
import { transactionsOf } from '../db/group-commit.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import type { KeysRepository } from '../keys/repository.js';
import { TAG } from '../openapi/tags.js';
import { keyCaller, restampKeys } from '../ratelimit/callers.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { TestClocks } from './clocks.js';
import { TestDataRemoved } from './schemas.js';
import { TEST_MODE_ABOUT, TEST_MODE_CONFIG, testKeyOf } from './get-clock.js';

export interface TestDataDeps {
  db: Db;
  changes: ChangeFeed;
  limiter: LimiterStore;
  clocks: TestClocks;
  keys: KeysRepository;
}

/**
 * `DELETE /test-data` (contract §11): a test key starts over as a new key of its plan. Its records go
 * in one transaction (deliveries, endpoints, Idempotency-Key records, events and their chain's head,
 * orders, its clock); then its windows, ban and ban history (the limiter's state), its pages held in
 * memory (a new stamp) and its fault sequence. The key, its plan and its pinned version stay; nothing
 * of any other key is touched: every statement names the key.
 */
export function resetTestData(app: App, { db, changes, limiter, clocks, keys }: TestDataDeps): void {
  const restamp = restampKeys(limiter, changes);
  app.delete(
    '/test-data',
    {
      config: TEST_MODE_CONFIG,
      schema: {
        operationId: 'resetTestData',
        summary: "Start your test key's data over",
        description: `Removes everything your test key made (its orders, events, webhook endpoints and their deliveries, Idempotency-Key records), clears its windows, its ban and the history that doubles bans, puts its clock back to the real time, running, and starts its fault sequence over. Your key, its plan and its pinned version stay. Answers how many of each were removed. ${TEST_MODE_ABOUT}`,
        tags: [TAG.testing],
        'x-stability': 'experimental',
        response: { 200: ref(TestDataRemoved), ...problemResponses(403, 429) },
      },
    },
    async (request): Promise<TestDataRemoved> => {
      const key = testKeyOf(request);
      const removed = await transactionsOf(db).run((trx) => removeAll(trx, key.id, clocks));
      changes.changed('orders', key.id);
      await Promise.all([limiter.forget(keyCaller(key.id)), restamp([key.id]), key.faults ? keys.restartFaults(key.id) : undefined]);
      return removed;
    },
  );
}

/** Every record of the key's, in an order its references allow. */
async function removeAll(trx: Db, keyId: string, clocks: TestClocks): Promise<TestDataRemoved> {
  const count = (result: { numDeletedRows: bigint }) => Number(result.numDeletedRows);
  const endpoints = trx.selectFrom('webhook_endpoints').select('id').where('api_key_id', '=', keyId);
  const deliveries = count(await trx.deleteFrom('webhook_deliveries').where('endpoint_id', 'in', endpoints).executeTakeFirstOrThrow());
  const webhookEndpoints = count(await trx.deleteFrom('webhook_endpoints').where('api_key_id', '=', keyId).executeTakeFirstOrThrow());
  await trx.deleteFrom('idempotency_records').where('api_key_id', '=', keyId).execute();
  const events = count(await trx.deleteFrom('events').where('api_key_id', '=', keyId).executeTakeFirstOrThrow());
  await trx.deleteFrom('event_heads').where('api_key_id', '=', keyId).execute();
  const orders = count(await trx.deleteFrom('orders').where('api_key_id', '=', keyId).executeTakeFirstOrThrow());
  await clocks.clear(trx, keyId);
  return { orders, events, webhookEndpoints, deliveries };
}
