/**
 * Nothing lost: `kill -9` the service while it delivers webhooks, restart it on the same SQLite file,
 * and every event committed before the kill reaches the endpoint (counted by `webhook-id`): a delivery
 * in flight when the process died is attempted again once its claim lapses, with the same id.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { WEBHOOK_DEFAULTS } from '../../src/config-webhooks.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { testDatabase } from '../helpers/database.js';
import { startServer, tempDir } from '../helpers/process.js';
import { startReceiver } from '../helpers/receiver.js';

const ORDERS = 60;

describe('kill -9 while webhooks are being delivered', () => {
  it('delivers every committed event after the restart, each with its own webhook-id', async () => {
    const file = join(tempDir(), 'petstore.db');
    const store = await testDatabase({ kind: 'sqlite', sqliteFile: file });
    const { record, key } = await new KeysRepository(store.db, systemClock).create({
      plan: 'enterprise',
      perMinute: 1_000_000,
      perDay: 1_000_000,
    });
    await store.db.destroy();
    // A receiver slow enough that deliveries are in flight when the process dies.
    const receiver = await startReceiver();
    const slow = receiver.received;
    const env = {
      DATABASE_URL: file,
      DEMO_KEYS: 'false',
      FULFILMENT_APPROVE_SECONDS: '0',
      WEBHOOK_TIMEOUT_SECONDS: '1',
    };
    const first = await startServer(env);
    let heldAtKill: number | undefined;
    try {
      const created = await fetch(`${first.url}/webhook-endpoints`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url }),
      });
      expect(created.status).toBe(201);
      receiver.otherwise = 'hang';
      const placed = await Promise.all(
        Array.from({ length: ORDERS }, () =>
          fetch(`${first.url}/store/orders`, {
            method: 'POST',
            headers: { 'x-api-key': key, 'content-type': 'application/json' },
            body: '{"petId":1}',
          }),
        ),
      );
      expect(placed.every((r) => r.status === 201)).toBe(true);
      // Some deliveries are under way (the receiver holds them): kill the service now.
      while (slow.length < 4) await new Promise((r) => setTimeout(r, 20));
      heldAtKill = slow.length;
      first.child.kill('SIGKILL');
      expect(await first.exited).toBe('SIGKILL');
    } finally {
      await first.stop();
    }

    receiver.otherwise = 200;
    const second = await startServer(env);
    try {
      const check = await testDatabase({ kind: 'sqlite', sqliteFile: file });
      const events = await check.db
        .selectFrom('events')
        .select(['seq', 'nonce'])
        .where('api_key_id', '=', record.id)
        .execute();
      await check.db.destroy();
      expect(events).toHaveLength(ORDERS);
      const committed = new Set(events.map((e) => `evt_${e.seq.toString(36)}${e.nonce}`));
      const delivered = () =>
        new Set(
          receiver.received.filter((r) => r.headers['webhook-signature']).map((r) => String(r.headers['webhook-id'])),
        );
      // Claims taken before the kill lapse after the attempt's timeout and a margin: seconds, not minutes.
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && [...committed].some((id) => !delivered().has(id)))
        await new Promise((r) => setTimeout(r, 200));
      expect([...committed].filter((id) => !delivered().has(id))).toEqual([]);
      expect([...delivered()].every((id) => committed.has(id))).toBe(true);
      // At least once, no more than that: only the attempts in flight at the kill (at most the endpoint's
      // share, WEBHOOK_ENDPOINT_CONCURRENCY) are made twice.
      const duplicates = receiver.received.filter((r) => r.headers['webhook-signature']).length - delivered().size;
      console.info(`kill -9 with ${heldAtKill} deliveries received and unanswered: ${duplicates} delivered twice`);
      expect(duplicates).toBeLessThanOrEqual(WEBHOOK_DEFAULTS.endpointConcurrency);
    } finally {
      await second.stop();
      await receiver.close();
    }
  }, 60_000);
});
