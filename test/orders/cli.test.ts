import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { TEST_STORE } from '../helpers/database.js';
import { firstPetWith, type Order, ordersAs } from '../helpers/orders.js';
import { cli, tempDir } from '../helpers/process.js';

// `petstore orders list --key ID`, in its own process on the app's store, as an operator runs it.
let t: TestApp;
let env: Record<string, string>;
beforeAll(async () => {
  t = await testApp(TEST_STORE === 'sqlite' ? { sqliteFile: join(tempDir(), 'petstore.db') } : {});
  env = { DATABASE_URL: t.databaseUrl };
});
afterAll(async () => t.close());

describe('petstore orders list', () => {
  it("shows a key's orders newest first with their states, when each moved and when it moves next", async () => {
    const { record, key } = await t.keys.create({ plan: 'pro', test: true });
    const pet = await firstPetWith(t, key, 'available');
    const placed = async () => json<Order>(await ordersAs(t, key).post({ petId: pet, quantity: 2 }));
    const [first, second, third] = [await placed(), await placed(), await placed()];
    await t.app.inject({ method: 'POST', url: `/store/orders/${first.id}/advance`, headers: { 'x-api-key': key } });
    await ordersAs(t, key).del(`/store/orders/${second.id}`);

    const listed = await cli(['orders', 'list', '--key', record.id, '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const orders = JSON.parse(listed.stdout) as Array<
      Order & { placedAt: string; movedAt: string; dueAt: string | null }
    >;
    expect(orders.map((o) => [o.id, o.status])).toEqual([
      [third.id, 'placed'],
      [second.id, 'cancelled'],
      [first.id, 'approved'],
    ]);
    const now = new Date(t.clock()).toISOString();
    expect(orders[0]).toMatchObject({ placedAt: now, movedAt: now, dueAt: new Date(t.clock() + 10_000).toISOString() });
    expect(orders[1]!.dueAt).toBeNull();
    expect(orders[2]!.dueAt).toBe(new Date(t.clock() + 60_000).toISOString());

    const human = await cli(['orders', 'list', '--key', record.id, '--status', 'approved'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`${first.id}  approved`);
    expect(human.stdout).not.toContain('cancelled');
    expect(human.stdout).toContain('moves next at');
  });

  it('says so for a key that does not exist, and refuses a state that does not', async () => {
    const unknown = await cli(['orders', 'list', '--key', 'key_0000000000000000'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('there is no key key_0000000000000000');
    const bad = await cli(['orders', 'list', '--key', 'key_0000000000000000', '--status', 'shipped'], env);
    expect(bad.code).toBe(2);
  });
});
