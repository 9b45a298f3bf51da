import { afterEach, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { type Delivery, endpointAt, placeOrder, webhooksAs } from '../helpers/webhooks.js';

/**
 * A test key's webhook retries follow its clock (docs/testing-clients.md#testing-your-client-in-seconds); the
 * `webhook-timestamp` header stays the real time.
 */

const TEST_SCHEDULE_MS = [1_000, 5_000, 30_000, 120_000, 300_000];
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0)) await thing.close();
});

describe("a test key's webhook retries", () => {
  it('advancing 24 h makes every attempt of the schedule that fell due, in order, each logged at its due instant in the key’s time; then the delivery is failed', async () => {
    const t: TestApp = await testApp({ random: () => 0 });
    const receiver: Receiver = await startReceiver(500);
    open.push(t, receiver);
    const key = await t.newKey({ plan: 'pro', test: true });
    const endpoint = await endpointAt(t, key, receiver.url, ['order.placed']);
    await t.request({ method: 'POST', url: '/test-clock/freeze', headers: { 'x-api-key': key } });
    await t.request({
      method: 'POST',
      url: '/test-clock/advance',
      headers: { 'x-api-key': key },
      payload: { seconds: 3_600 },
    });
    await placeOrder(t, key);
    const [pending] = json<{ data: Delivery[] }>(
      await webhooksAs(t, key).get(`/webhook-endpoints/${endpoint.id}/deliveries`),
    ).data;
    const dueAt = Date.parse(pending!.nextAttemptAt!);
    expect(dueAt).toBe(t.clock() + 3_600_000);
    // The key's time stands still: the real time passing sends nothing beyond the first attempt.
    expect(await t.dispatcher.runDue()).toBe(1);
    t.clock.advance(600_000);
    expect(await t.dispatcher.runDue()).toBe(0);
    await t.request({
      method: 'POST',
      url: '/test-clock/advance',
      headers: { 'x-api-key': key },
      payload: { seconds: 86_400 },
    });
    expect(await t.dispatcher.runDue()).toBe(TEST_SCHEDULE_MS.length);
    const [delivery] = json<{ data: Delivery[] }>(
      await webhooksAs(t, key).get(`/webhook-endpoints/${endpoint.id}/deliveries`),
    ).data;
    expect(delivery!.state).toBe('failed');
    let at = dueAt;
    const expected = [at, ...TEST_SCHEDULE_MS.map((wait) => (at += wait))].map((ms) => new Date(ms).toISOString());
    expect(delivery!.attempts.map((attempt) => attempt.at)).toEqual(expected);
    // Every attempt was sent with the real time, and one webhook-id.
    expect(receiver.received).toHaveLength(6);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(
      receiver.received.slice(1).every((r) => Number(r.headers['webhook-timestamp']) === Math.floor(t.clock() / 1000)),
    ).toBe(true);
  });

  it("a live key's deliveries go by the real time beside a moved clock's", async () => {
    const t: TestApp = await testApp({ random: () => 0 });
    const receiver: Receiver = await startReceiver(200);
    open.push(t, receiver);
    const [key, live] = [await t.newKey({ plan: 'pro', test: true }), await t.newKey('pro')];
    for (const k of [key, live]) await endpointAt(t, k, receiver.url, ['order.placed']);
    await t.request({
      method: 'POST',
      url: '/test-clock/advance',
      headers: { 'x-api-key': key },
      payload: { seconds: 86_400 },
    });
    await placeOrder(t, key);
    await placeOrder(t, live);
    expect(await t.dispatcher.runDue()).toBe(2);
    expect(receiver.received).toHaveLength(2);
  });
});
