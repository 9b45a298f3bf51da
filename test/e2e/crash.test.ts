/**
 * Crash safety: `kill -9` the service in the middle of a stream of `POST /store/orders` with
 * idempotency keys, restart it on the same SQLite file, and check that every order acknowledged
 * with 201 exists exactly once and that replaying its key returns it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { testDatabase } from '../helpers/database.js';
import { startServer, tempDir } from '../helpers/process.js';

const WORKERS = 20;

interface Sent {
  idempotencyKey: string;
  body: string;
  /** The order, when the service acknowledged it with 201; undefined when the request got no answer. */
  order?: { id: number; petId: number; quantity: number };
}

function place(url: string, key: string, sent: Sent): Promise<Response> {
  return fetch(`${url}/store/orders`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': sent.idempotencyKey },
    body: sent.body,
    signal: AbortSignal.timeout(10_000),
  });
}

describe('kill -9 during a stream of idempotent orders', () => {
  it('keeps every acknowledged order exactly once, and its key replays it after the restart', async () => {
    const file = join(tempDir(), 'petstore.db');
    const store = await testDatabase({ kind: 'sqlite', sqliteFile: file });
    const { key } = await new KeysRepository(store.db, systemClock).create({
      plan: 'enterprise',
      perMinute: 1_000_000,
      perDay: 1_000_000,
    });
    await store.db.destroy();
    const env = { DATABASE_URL: file, DEMO_KEYS: 'false' };

    const first = await startServer(env);
    const sent: Sent[] = [];
    const unexpected: string[] = [];
    let killed = false;
    let next = 0;
    const workers = Array.from({ length: WORKERS }, async () => {
      while (!killed) {
        const n = next++;
        const request: Sent = {
          idempotencyKey: `crash-${n}`,
          body: JSON.stringify({ petId: 1 + (n % 3), quantity: 1 + (n % 5) }),
        };
        sent.push(request);
        const response = await place(first.url, key, request).catch(() => null);
        // No response: the process died with this request in flight; it may or may not have been placed.
        if (response?.status === 201) request.order = (await response.json()) as Sent['order'];
        else if (response) unexpected.push(`${response.status} ${await response.text()}`);
      }
    });
    // Kill it mid-stream, once a good number of orders have been acknowledged.
    while (sent.filter((s) => s.order).length < 300) await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGKILL');
    killed = true;
    expect(await first.exited).toBe('SIGKILL');
    await Promise.all(workers);

    const second = await startServer(env);
    try {
      const acknowledged = sent.filter((s) => s.order);
      const unanswered = sent.filter((s) => !s.order);
      expect(unexpected).toEqual([]);
      expect(acknowledged.length).toBeGreaterThanOrEqual(300);

      // In the store: one order per idempotency record and one record per acknowledged key.
      const check = await testDatabase({ kind: 'sqlite', sqliteFile: file });
      const records = await check.db
        .selectFrom('idempotency_records')
        .select(['idempotency_key', 'order_id'])
        .execute();
      const orders = await check.db.selectFrom('orders').select('id').execute();
      await check.db.destroy();
      const orderOfKey = new Map(records.map((r) => [r.idempotency_key, Number(r.order_id)]));
      expect(new Set(orders.map((o) => o.id)).size).toBe(orders.length);
      expect(orders.length).toBe(records.length);
      for (const s of acknowledged) expect(orderOfKey.get(s.idempotencyKey), s.idempotencyKey).toBe(s.order!.id);

      // Over HTTP: every acknowledged key replays its order; every unanswered one can be retried safely.
      for (const s of acknowledged) {
        const response = await place(second.url, key, s);
        expect(response.status).toBe(201);
        expect(response.headers.get('idempotent-replayed')).toBe('true');
        expect(await response.json()).toEqual(s.order);
      }
      for (const s of unanswered) {
        const response = await place(second.url, key, s);
        expect(response.status).toBe(201);
        const order = (await response.json()) as { id: number };
        if (orderOfKey.has(s.idempotencyKey)) expect(order.id).toBe(orderOfKey.get(s.idempotencyKey));
      }
      const listed: number[] = [];
      for (let cursor: string | null = ''; cursor !== null;) {
        const page = (await (
          await fetch(`${second.url}/store/orders?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
            headers: { 'x-api-key': key },
          })
        ).json()) as { data: { id: number }[]; nextCursor: string | null };
        listed.push(...page.data.map((o) => o.id));
        cursor = page.nextCursor;
      }
      expect(listed.length).toBe(new Set(sent.map((s) => s.idempotencyKey)).size);
      expect(new Set(listed).size).toBe(listed.length);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  }, 60_000);
});
