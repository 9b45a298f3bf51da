import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { expectProblem, firstPetWith, ordersAs } from '../helpers/orders.js';
import { endpointAt, webhooksAs } from '../helpers/webhooks.js';

/**
 * `DELETE /test-data` (docs/testing-clients.md#testing-your-client-in-seconds): a test
 * key starts over as a new key of its plan; no other key is touched.
 */

let t: TestApp;
let available: number;
beforeAll(async () => {
  t = await testApp();
  available = await firstPetWith(t, await t.newKey('pro'), 'available');
});
afterAll(async () => {
  await t.close();
});

const as = (key: string) => ({ 'x-api-key': key });
const reset = (key: string) => t.request({ method: 'DELETE', url: '/test-data', headers: as(key) });

/** Orders (one with an Idempotency-Key), their events, an endpoint and its deliveries: what a key's run leaves. */
async function used(key: string): Promise<void> {
  await endpointAt(t, key, 'http://127.0.0.1:9/hook');
  for (let i = 0; i < 3; i++)
    expect((await ordersAs(t, key).post({ petId: available, quantity: 1 })).statusCode).toBe(201);
  const keyed = await t.request({
    method: 'POST',
    url: '/store/orders',
    headers: { ...as(key), 'idempotency-key': 'once' },
    payload: { petId: available },
  });
  expect(keyed.statusCode).toBe(201);
}

/** What a key holds, as it reads it. */
async function holdings(key: string) {
  const orders = json<{ data: unknown[] }>(await ordersAs(t, key).get('/store/orders?limit=100')).data.length;
  const endpoints = json<{ data: { id: string }[] }>(await webhooksAs(t, key).get('/webhook-endpoints')).data;
  const deliveries =
    endpoints.length === 0
      ? 0
      : json<{ data: unknown[] }>(
          await webhooksAs(t, key).get(`/webhook-endpoints/${endpoints[0]!.id}/deliveries?limit=100`),
        ).data.length;
  return { orders, events: (await eventsOf(t, key)).length, webhookEndpoints: endpoints.length, deliveries };
}

describe('DELETE /test-data', () => {
  it("removes what the key made, answers the counts, and leaves every other key's data as it was", async () => {
    const [key, other, live] = [
      await t.newKey({ plan: 'pro', test: true }),
      await t.newKey({ plan: 'pro', test: true }),
      await t.newKey('pro'),
    ];
    for (const k of [key, other, live]) await used(k);
    const before = { other: await holdings(other), live: await holdings(live) };
    expect(before.live).toEqual({ orders: 4, events: 4, webhookEndpoints: 1, deliveries: 4 });
    expect(await holdings(key)).toEqual(before.live);

    const answer = await reset(key);
    expect(answer.statusCode).toBe(200);
    expect(json(answer)).toEqual({ orders: 4, events: 4, webhookEndpoints: 1, deliveries: 4 });
    expect(await holdings(key)).toEqual({ orders: 0, events: 0, webhookEndpoints: 0, deliveries: 0 });
    expect(await holdings(other)).toEqual(before.other);
    expect(await holdings(live)).toEqual(before.live);
    // Its Idempotency-Key records went too: the same key places a new order.
    const again = await t.request({
      method: 'POST',
      url: '/store/orders',
      headers: { ...as(key), 'idempotency-key': 'once' },
      payload: { petId: available },
    });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    // A reset of nothing removes nothing.
    expect((await reset(key)).statusCode).toBe(200);
    expect(json(await reset(key))).toEqual({ orders: 0, events: 0, webhookEndpoints: 0, deliveries: 0 });
  });

  it('clears the windows, the ban and the history that doubles bans, and puts the clock back to the real time', async () => {
    const key = await t.newKey({ plan: 'free', test: true });
    const pets = () => t.request({ url: '/pets?limit=1', headers: as(key) });
    const ban = async () => {
      let last = await pets();
      for (let i = 0; i < 100 && !String(last.headers['content-type']).includes('problem'); i++) last = await pets();
      for (let i = 0; i < 11; i++) last = await pets();
      expectProblem(last, 429, 'key-banned');
      return json<{ retryAfter: number }>(last).retryAfter;
    };
    await t.request({ method: 'POST', url: '/test-clock/freeze', headers: as(key) });
    expect(await ban()).toBe(60);
    await t.request({ method: 'POST', url: '/test-clock/advance', headers: as(key), payload: { seconds: 120 } });
    expect(await ban()).toBe(120);
    // Answered during the ban, counting nothing.
    expect((await reset(key)).statusCode).toBe(200);
    expect(json(await t.request({ url: '/test-clock', headers: as(key) }))).toEqual({
      now: new Date(t.clock()).toISOString(),
      offsetSeconds: 0,
      frozen: false,
    });
    const first = await pets();
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-remaining']).toBe('59');
    // A new key's first ban, not a third.
    expect(await ban()).toBe(60);
  });

  it('is for test keys only: a live key gets 403 and keeps everything', async () => {
    const live = await t.newKey('pro');
    await used(live);
    const before = await holdings(live);
    expectProblem(await reset(live), 403, 'test-key-required');
    expect(await holdings(live)).toEqual(before);
  });
});
