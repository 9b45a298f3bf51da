import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { testDatabase } from '../helpers/database.js';
import { startServer, tempDir } from '../helpers/process.js';

/**
 * The running service moves orders by itself. Every rule of the fulfilment is tested on a fake clock
 * (test/orders/fulfilment.test.ts); this is the one run on the real clock, with one-second delays, to
 * show that the service starts its fulfilment and that a stop waits for it.
 */
describe('the running service', () => {
  it('approves and delivers an order by itself, records both moves, counts them, and stops cleanly', async () => {
    const file = join(tempDir(), 'petstore.db');
    const store = await testDatabase({ kind: 'sqlite', sqliteFile: file });
    const { key } = await new KeysRepository(store.db, systemClock).create({ plan: 'pro' });
    await store.db.destroy();
    const server = await startServer({
      DATABASE_URL: file,
      FULFILMENT_APPROVE_SECONDS: '1',
      FULFILMENT_DELIVER_SECONDS: '1',
    });
    try {
      const placed = await fetch(`${server.url}/store/orders`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ petId: 1 }),
      });
      const { id } = (await placed.json()) as { id: number };
      const statuses = new Set<string>();
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && !statuses.has('delivered')) {
        const order = (await (
          await fetch(`${server.url}/store/orders/${id}`, { headers: { 'x-api-key': key } })
        ).json()) as { status: string };
        statuses.add(order.status);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(statuses.has('delivered')).toBe(true);
      const events = (await (
        await fetch(`${server.url}/events?orderId=${id}`, { headers: { 'x-api-key': key } })
      ).json()) as { data: Array<{ type: string }> };
      expect(events.data.map((e) => e.type)).toEqual(['order.delivered', 'order.approved', 'order.placed']);
      const metrics = await (await fetch(`${server.adminUrl}/metrics`)).text();
      expect(metrics).toMatch(/^petstore_order_moves_total\{to="delivered"\} 1$/m);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
