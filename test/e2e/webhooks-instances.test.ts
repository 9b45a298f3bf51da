import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type Db, openDatabase } from '../../src/db/database.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { EndpointsRepository } from '../../src/webhooks/endpoints.js';
import { fakeClock } from '../helpers/clock.js';
import { postgresAvailable, type TestDatabase, testDatabase } from '../helpers/database.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';

/**
 * Two instances sharing one PostgreSQL, each with its own pool and dispatcher, and 2,000 deliveries
 * due at once: each is attempted by one instance at a time (a claim outlives the attempt), so with a
 * receiver that always answers 200 each arrives exactly once.
 */
const available = await postgresAvailable();

describe.skipIf(!available)('two instances delivering webhooks on PostgreSQL', () => {
  const clock = fakeClock(new Date().toISOString());
  const config = loadConfig({}).webhooks;
  const quiet = { warn: () => {}, info: () => {} };
  let store: TestDatabase;
  let pools: Db[];
  let receiver: Receiver;

  beforeAll(async () => {
    store = await testDatabase({ kind: 'postgres' });
    pools = [openDatabase(store.config), openDatabase(store.config)];
    receiver = await startReceiver(200);
  });
  afterAll(async () => {
    for (const pool of pools ?? []) await pool.destroy();
    await store?.db.destroy();
    await store?.drop();
    await receiver?.close();
  });

  it('deliver 2,000 deliveries due at once, each received exactly once', async () => {
    const { record } = await new KeysRepository(store.db, clock).create({ plan: 'business' });
    const endpoints = new EndpointsRepository(store.db);
    for (let i = 0; i < 10; i++) await endpoints.create(record.id, true, { url: `${receiver.url}?${i}` }, clock());
    // 200 orders, written as the store would have them: each order's event goes to the ten endpoints.
    const at = new Date(clock()).toISOString();
    await sql`insert into orders (api_key_id, pet_id, quantity, ship_date, status, complete, created_at)
      select ${record.id}, 1, 1, ${at}, 'placed', 0, ${at} from generate_series(1, 200)`.execute(store.db);
    const { n } = await store.db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(2_000);

    const dispatchers = pools.map((db) => Dispatcher.of(db, config, { clock, metrics: createMetrics(), log: quiet }));
    try {
      const attempted = await Promise.all(dispatchers.map((d) => d.runDue()));
      expect(attempted[0]! + attempted[1]!).toBe(2_000);
      expect(attempted.every((a) => a > 0)).toBe(true);
    } finally {
      await Promise.all(dispatchers.map((d) => d.stop()));
    }
    expect(receiver.received).toHaveLength(2_000);
    // Each endpoint signs with a secret of its own: an event and a signature name one delivery.
    const perEndpoint = new Set(
      receiver.received.map((r) => `${r.headers['webhook-id']}|${r.headers['webhook-signature']}`),
    );
    expect(perEndpoint.size).toBe(2_000);
    const states = await store.db.selectFrom('webhook_deliveries').select(['state', 'attempt_count']).execute();
    expect(states.every((d) => d.state === 'succeeded' && d.attempt_count === 1)).toBe(true);
  }, 120_000);
});
