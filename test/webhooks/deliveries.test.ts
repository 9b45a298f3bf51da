import { WebhookVerificationError } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { type Delivery, endpointAt, placeOrder, verifiedByReference, webhooksAs } from '../helpers/webhooks.js';

/** Deliveries as a receiver written to the Standard Webhooks specification takes them (docs/webhooks.md). */

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await testApp();
  receiver = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});
afterEach(() => {
  receiver.received.length = 0;
  receiver.answers.length = 0;
  receiver.otherwise = 200;
});

describe('a delivery', () => {
  it('is the event as GET /events/{eventId} shows it, signed so that the reference library accepts it', async () => {
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    const order = await placeOrder(t, key);
    expect(await t.dispatcher.runDue()).toBe(1);
    const [delivery] = receiver.received;
    expect(delivery!.headers['content-type']).toBe('application/json');
    const event = json(
      await t.app.inject({ url: `/events/${delivery!.headers['webhook-id']}`, headers: { 'x-api-key': key } }),
    );
    expect(delivery!.body).toBe(JSON.stringify(event));
    expect(event).toMatchObject({ type: 'order.placed', livemode: true, data: order });
    expect(delivery!.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock() / 1000)));
    expect(verifiedByReference(endpoint.secret, delivery!)).toEqual(event);
  });

  it('is refused by the reference library when one byte of its body changes, or with another secret', async () => {
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    const [delivery] = receiver.received;
    const changed = { ...delivery!, body: delivery!.body.replace('"quantity":1', '"quantity":2') };
    expect(changed.body).not.toBe(delivery!.body);
    expect(() => verifiedByReference(endpoint.secret, changed)).toThrow(WebhookVerificationError);
    const other = await endpointAt(t, key, receiver.url);
    expect(() => verifiedByReference(other.secret, delivery!)).toThrow(WebhookVerificationError);
  });

  it('goes to every endpoint of the key subscribed to its type, and to no other key', async () => {
    const key = await t.newKey('business');
    const other = await t.newKey('business');
    const all = await endpointAt(t, key, `${receiver.url}?all`);
    await endpointAt(t, key, `${receiver.url}?approved`, ['order.approved']);
    await endpointAt(t, other, `${receiver.url}?other`);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toHaveLength(1);
    expect(verifiedByReference(all.secret, receiver.received[0]!)).toMatchObject({ type: 'order.placed' });
  });

  it('carries the same webhook-id on every attempt, and is signed with both secrets while a rotated one overlaps', async () => {
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    receiver.answers.push(500);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    const rotated = json<{ secret: string }>(
      await webhooksAs(t, key).post(`/webhook-endpoints/${endpoint.id}/rotate-secret`),
    );
    expect(rotated.secret).not.toBe(endpoint.secret);
    t.clock.advance(6_000);
    await t.dispatcher.runDue();
    const [first, second] = receiver.received;
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(String(second!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [endpoint.secret, rotated.secret])
      expect(verifiedByReference(secret, second!)).toMatchObject({ type: 'order.placed' });
    // A day later the old secret no longer signs.
    t.clock.advance(24 * 3_600_000);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    const third = receiver.received[2]!;
    expect(String(third.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => verifiedByReference(endpoint.secret, third)).toThrow(WebhookVerificationError);
    expect(verifiedByReference(rotated.secret, third)).toMatchObject({ type: 'order.placed' });
  });

  it('is counted in metrics: attempts by outcome, their duration, and the deliveries pending', async () => {
    const own = await testApp();
    try {
      const key = await own.newKey('business');
      await endpointAt(own, key, receiver.url);
      await endpointAt(own, key, `${receiver.url}?again`);
      receiver.answers.push(200, 503);
      await placeOrder(own, key);
      await own.dispatcher.runDue();
      const metrics = (await own.admin.inject({ url: '/metrics' })).body;
      expect(metrics).toMatch(/^petstore_webhook_attempts_total\{outcome="succeeded"\} 1$/m);
      expect(metrics).toMatch(/^petstore_webhook_attempts_total\{outcome="retrying"\} 1$/m);
      expect(metrics).toMatch(/^petstore_webhook_attempt_duration_seconds_count 2$/m);
      expect(metrics).toMatch(/^petstore_webhook_deliveries_pending 1$/m);
    } finally {
      await own.close();
    }
  });

  it('leaves for the first time within a second of its event: it is due at once, and an instance looks twice a second', async () => {
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    await placeOrder(t, key);
    const log = json<{ data: Delivery[] }>(
      await webhooksAs(t, key).get(`/webhook-endpoints/${endpoint.id}/deliveries`),
    );
    expect(log.data[0]).toMatchObject({
      state: 'pending',
      nextAttemptAt: new Date(t.clock()).toISOString(),
      attempts: [],
    });
    const { DISPATCH_INTERVAL_MS } = await import('../../src/webhooks/dispatcher.js');
    expect(DISPATCH_INTERVAL_MS).toBeLessThanOrEqual(500);
  });
});
