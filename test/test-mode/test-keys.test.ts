import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OLDEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { expectProblem, firstPetWith, type Order, ordersAs } from '../helpers/orders.js';

/**
 * Child test keys for parallel test runs (docs/testing-clients.md#testing-your-client-in-seconds): `POST /test-keys`,
 * `DELETE /test-keys/{keyId}`.
 */

interface Child {
  id: string;
  key: string;
  plan: string;
  apiVersion: string;
  parentId: string;
}

let t: TestApp;
let available: number;
beforeAll(async () => {
  t = await testApp();
  available = await firstPetWith(t, await t.newKey('pro'), 'available');
});
afterAll(async () => {
  await t.close();
});

const as = (key: string, extra: Record<string, string> = {}) => ({ 'x-api-key': key, ...extra });
const makeChild = (parent: string, extra: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: '/test-keys', headers: as(parent, extra) });

describe('child test keys', () => {
  it("are made with the parent's plan and version, work at once, and are the parent's to delete", async () => {
    const parent = await t.newKey({ plan: 'business', test: true, apiVersion: OLDEST_VERSION });
    const made = await makeChild(parent);
    expect(made.statusCode).toBe(201);
    const child = json<Child>(made);
    expect(child).toMatchObject({ plan: 'business', apiVersion: OLDEST_VERSION, name: 'business key (child)' });
    expect(child.key).toMatch(/^pet_test_[A-Za-z0-9_-]{32}$/);
    expect((await t.request({ url: '/usage', headers: as(child.key) })).statusCode).toBe(200);
    expectProblem(
      await t.request({
        method: 'DELETE',
        url: `/test-keys/${child.id}`,
        headers: as(await t.newKey({ plan: 'pro', test: true })),
      }),
      404,
      'not-found',
    );
    expectProblem(
      await t.request({ method: 'DELETE', url: '/test-keys/key_00', headers: as(parent) }),
      404,
      'not-found',
    );
    expect((await t.request({ method: 'DELETE', url: `/test-keys/${child.id}`, headers: as(parent) })).statusCode).toBe(
      204,
    );
    expectProblem(await t.request({ url: '/usage', headers: as(child.key) }), 401, 'unauthorized');
    expectProblem(await makeChild(await t.newKey('pro')), 403, 'test-key-required');
  });

  it('run four jobs at once, each advancing its own clock and placing its own orders; none sees another’s time or data', async () => {
    const parent = await t.newKey({ plan: 'business', test: true });
    const children = await Promise.all([1, 2, 3, 4].map(async () => json<Child>(await makeChild(parent))));
    const jobs = children.map(async ({ key }, i) => {
      await t.request({ method: 'POST', url: '/test-clock/freeze', headers: as(key) });
      await t.request({
        method: 'POST',
        url: '/test-clock/advance',
        headers: as(key),
        payload: { seconds: 3_600 * (i + 1) },
      });
      for (let n = 0; n <= i; n++) await ordersAs(t, key).post({ petId: available });
      return { key, i };
    });
    for (const { key, i } of await Promise.all(jobs)) {
      expect(
        json<{ offsetSeconds: number }>(await t.request({ url: '/test-clock', headers: as(key) })).offsetSeconds,
      ).toBe(3_600 * (i + 1) - 0);
      expect(json<{ data: Order[] }>(await ordersAs(t, key).get('/store/orders')).data).toHaveLength(i + 1);
      expect(await eventsOf(t, key)).toHaveLength(i + 1);
    }
    expect(
      json<{ offsetSeconds: number }>(await t.request({ url: '/test-clock', headers: as(parent) })).offsetSeconds,
    ).toBe(0);
    expect(json<{ data: Order[] }>(await ordersAs(t, parent).get('/store/orders')).data).toHaveLength(0);
  });

  it("are deleted, with their data, by the parent's reset", async () => {
    const parent = await t.newKey({ plan: 'pro', test: true });
    const child = json<Child>(await makeChild(parent));
    const grandchild = json<Child>(await makeChild(child.key));
    await ordersAs(t, child.key).post({ petId: available });
    await ordersAs(t, grandchild.key).post({ petId: available });
    const childOrders = await t.db
      .selectFrom('orders')
      .select('id')
      .where('api_key_id', 'in', [child.id, grandchild.id])
      .execute();
    expect(childOrders).toHaveLength(2);
    expect((await t.request({ method: 'DELETE', url: '/test-data', headers: as(parent) })).statusCode).toBe(200);
    for (const key of [child.key, grandchild.key])
      expectProblem(await t.request({ url: '/usage', headers: as(key) }), 401, 'unauthorized');
    expect(
      await t.db.selectFrom('orders').select('id').where('api_key_id', 'in', [child.id, grandchild.id]).execute(),
    ).toHaveLength(0);
    // The parent itself stays, and makes children again.
    expect((await makeChild(parent)).statusCode).toBe(201);
  });

  it('are at most 100 alive per parent: the 101st is a 409 test-key-limit, and a deletion makes room', async () => {
    const parent = await t.newKey({ plan: 'pro', test: true });
    const made: Child[] = [];
    for (let i = 0; i < 100; i++) made.push(json<Child>(await makeChild(parent)));
    expectProblem(await makeChild(parent), 409, 'test-key-limit');
    await t.request({ method: 'DELETE', url: `/test-keys/${made[0]!.id}`, headers: as(parent) });
    expect((await makeChild(parent)).statusCode).toBe(201);
  });

  it('are at most 1,000 alive below one root, at every depth: the next is a 409 test-key-limit', async () => {
    const root = await t.newKey({ plan: 'pro', test: true });
    // A chain of generations, each making children: 10 children of the root, then 99 under each of nine of them.
    const first = [] as Child[];
    for (let i = 0; i < 10; i++) first.push(json<Child>(await makeChild(root)));
    for (const child of first.slice(0, 9))
      for (let i = 0; i < 99; i++) expect((await makeChild(child.key)).statusCode).toBe(201);
    // 10 + 891 = 901: a grandchild goes deeper, to 1,000.
    const deep = json<Child>(await makeChild(first[9]!.key));
    for (let i = 0; i < 98; i++) expect((await makeChild(deep.key)).statusCode).toBe(201);
    const refused = await makeChild(first[9]!.key);
    expectProblem(refused, 409, 'test-key-limit');
    expect(json<{ detail: string }>(refused).detail).toMatch(/1000 keys alive below it/);
    expectProblem(await makeChild(root), 409, 'test-key-limit');
    // A deletion makes room, wherever it is in the tree.
    await t.request({ method: 'DELETE', url: `/test-keys/${first[0]!.id}`, headers: as(root) });
    expect((await makeChild(deep.key)).statusCode).toBe(201);
  });

  it('may be given lower limits than the parent’s, never higher: a 400 naming the member, and nothing made', async () => {
    const parent = await t.newKey({ plan: 'free', test: true });
    const lowered = await t.request({
      method: 'POST',
      url: '/test-keys',
      headers: as(parent),
      payload: { perMinute: 5, perDay: 50 },
    });
    expect(lowered.statusCode).toBe(201);
    const child = json<Child>(lowered);
    // Its own children may go lower still, never above it (the refusal is one of its five requests).
    const higher = await t.request({
      method: 'POST',
      url: '/test-keys',
      headers: as(child.key),
      payload: { perMinute: 6 },
    });
    expectProblem(higher, 400, 'invalid-request');
    expect(json(higher)).toMatchObject({
      errors: [{ in: 'body', name: 'perMinute', message: "must be at most 5, your key's" }],
    });
    for (let i = 0; i < 4; i++)
      expect((await t.request({ url: '/pets/1', headers: as(child.key) })).statusCode).toBe(200);
    const refused = await t.request({ url: '/pets/1', headers: as(child.key) });
    expect(refused.statusCode).toBe(429);
    expect(json(refused)).toMatchObject({ plan: 'free', window: 'minute', limit: 5 });
    expect(refused.headers['ratelimit-policy']).toBe('"minute";q=5;w=60, "day";q=50;w=86400');
    const aboveParent = await t.request({
      method: 'POST',
      url: '/test-keys',
      headers: as(parent),
      payload: { perDay: 1001 },
    });
    expectProblem(aboveParent, 400, 'invalid-request');
    expect(json(aboveParent)).toMatchObject({ errors: [{ in: 'body', name: 'perDay' }] });
  });

  it('honour Idempotency-Key: a retry is shown the same child and key, which is stored nowhere', async () => {
    const parent = await t.newKey({ plan: 'pro', test: true });
    const first = json<Child>(await makeChild(parent, { 'idempotency-key': 'job-7' }));
    const again = await makeChild(parent, { 'idempotency-key': 'job-7' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(json<Child>(again)).toEqual(first);
    expect((await t.request({ url: '/usage', headers: as(first.key) })).statusCode).toBe(200);
    const records = await t.db
      .selectFrom('idempotency_records')
      .select('response_body')
      .where('api_key_id', '=', (await t.keys.findByKey(parent))!.id)
      .execute();
    expect(records.map((r) => r.response_body).join('')).not.toContain(first.key);
    expect(json<{ id: string }>(await makeChild(parent, { 'idempotency-key': 'job-8' })).id).not.toBe(first.id);
  });
});
