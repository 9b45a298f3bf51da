import { afterEach, describe, expect, it } from 'vitest';
import { decide, JITTER } from '../../src/webhooks/retries.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { type Delivery, type EndpointWithSecret, endpointAt, placeOrder, webhooksAs } from '../helpers/webhooks.js';

/** Retries and disabling (docs/webhooks.md), on the injected clock: nothing here waits for real time. */

const SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0)) await thing.close();
});

async function setUp(options: Parameters<typeof testApp>[0] = {}, answer: Receiver['otherwise'] = 500) {
  const t = await testApp(options);
  const receiver = await startReceiver(answer);
  open.push(t, receiver);
  return { t, receiver };
}

const logOf = async (t: TestApp, key: string, endpoint: EndpointWithSecret) =>
  json<{ data: Delivery[] }>(await webhooksAs(t, key).get(`/webhook-endpoints/${endpoint.id}/deliveries`)).data;

describe('the retry schedule', () => {
  it('retries a failing delivery 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after the attempt before, then fails it', async () => {
    const { t, receiver } = await setUp({ random: () => 0 });
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    await placeOrder(t, key);
    expect(await t.dispatcher.runDue()).toBe(1);
    for (const wait of SCHEDULE_MS) {
      const [delivery] = await logOf(t, key, endpoint);
      expect(delivery!.nextAttemptAt).toBe(new Date(t.clock() + wait).toISOString());
      t.clock.advance(wait - 1);
      expect(await t.dispatcher.runDue()).toBe(0);
      t.clock.advance(1);
      expect(await t.dispatcher.runDue()).toBe(1);
    }
    const [delivery] = await logOf(t, key, endpoint);
    expect(delivery).toMatchObject({ state: 'failed', nextAttemptAt: null });
    expect(delivery!.attempts).toHaveLength(8);
    expect(delivery!.attempts.every((a) => a.status === 500 && a.ms >= 0)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('adds up to 10 % of each wait at random, never less than the wait', () => {
    const failed = { status: 500, ms: 3 };
    for (const [i, wait] of SCHEDULE_MS.entries()) {
      expect(decide(failed, 0, i, SCHEDULE_MS, () => 0).nextAttemptAt).toBe(wait);
      expect(decide(failed, 0, i, SCHEDULE_MS, () => 0.999_999).nextAttemptAt).toBe(
        Math.round(wait * (1 + JITTER * 0.999_999)),
      );
      expect(decide(failed, 0, i, SCHEDULE_MS, () => 0.999_999).nextAttemptAt!).toBeLessThanOrEqual(
        wait * (1 + JITTER),
      );
    }
  });

  it('waits no less than a 429 or a 503 asks in Retry-After; another status’s Retry-After does not count', async () => {
    const { t, receiver } = await setUp({ random: () => 0 });
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    receiver.answers.push(
      { status: 503, headers: { 'retry-after': '120' } },
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 500, headers: { 'retry-after': '86400' } },
    );
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    expect((await logOf(t, key, endpoint))[0]!.nextAttemptAt).toBe(new Date(t.clock() + 120_000).toISOString());
    t.clock.advance(120_000);
    await t.dispatcher.runDue();
    expect((await logOf(t, key, endpoint))[0]!.nextAttemptAt).toBe(new Date(t.clock() + 300_000).toISOString());
    t.clock.advance(300_000);
    await t.dispatcher.runDue();
    expect((await logOf(t, key, endpoint))[0]!.nextAttemptAt).toBe(new Date(t.clock() + 1_800_000).toISOString());
  });

  it('bounds what a Retry-After asks by the schedule’s longest wait: a huge one is recorded, and the schedule still runs out', async () => {
    const { t, receiver } = await setUp({ random: () => 0 });
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    const longest = Math.max(...SCHEDULE_MS);
    receiver.otherwise = { status: 429, headers: { 'retry-after': '99999999999999999' } };
    await placeOrder(t, key);
    for (let attempt = 1; attempt <= SCHEDULE_MS.length; attempt++) {
      expect(await t.dispatcher.runDue()).toBe(1);
      const [delivery] = await logOf(t, key, endpoint);
      expect(delivery!.attempts).toHaveLength(attempt);
      expect(delivery!.nextAttemptAt).toBe(new Date(t.clock() + longest).toISOString());
      t.clock.advance(longest);
    }
    expect(await t.dispatcher.runDue()).toBe(1);
    expect((await logOf(t, key, endpoint))[0]).toMatchObject({
      state: 'failed',
      nextAttemptAt: null,
      attempts: expect.any(Array),
    });
    expect((await logOf(t, key, endpoint))[0]!.attempts).toHaveLength(SCHEDULE_MS.length + 1);
    // An HTTP date years ahead asks too much in the same way.
    expect(decide({ status: 503, retryAfterMs: 1e15, ms: 1 }, 0, 0, SCHEDULE_MS, () => 0).nextAttemptAt).toBe(longest);
  });

  it('retries a test key’s deliveries on WEBHOOK_TEST_RETRY_SCHEDULE (1 s, 5 s, 30 s, 2 min, 5 min), so that a person sees them', async () => {
    const { t, receiver } = await setUp({ random: () => 0 });
    const key = await t.newKey({ plan: 'business', test: true });
    const endpoint = await endpointAt(t, key, receiver.url);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    for (const wait of [1_000, 5_000, 30_000, 120_000, 300_000]) {
      expect((await logOf(t, key, endpoint))[0]!.nextAttemptAt).toBe(new Date(t.clock() + wait).toISOString());
      t.clock.advance(wait);
      expect(await t.dispatcher.runDue()).toBe(1);
    }
    expect((await logOf(t, key, endpoint))[0]).toMatchObject({ state: 'failed', nextAttemptAt: null });
  });
});

describe('disabling', () => {
  it('disables an endpoint that answers 410 at once: nothing more is sent until it is enabled again, and then new events are', async () => {
    const { t, receiver } = await setUp({}, 410);
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    expect(json(await webhooksAs(t, key).get(`/webhook-endpoints/${endpoint.id}`))).toMatchObject({
      enabled: false,
      disabledReason: 'gone',
    });
    expect((await logOf(t, key, endpoint))[0]).toMatchObject({ state: 'failed', nextAttemptAt: null });
    await placeOrder(t, key);
    t.clock.advance(3_600_000);
    expect(await t.dispatcher.runDue()).toBe(0);
    expect(receiver.received).toHaveLength(1);

    receiver.otherwise = 200;
    expect(json(await webhooksAs(t, key).patch(endpoint.id, { enabled: true }))).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
    const order = await placeOrder(t, key);
    await t.dispatcher.runDue();
    expect(receiver.received.map((r) => JSON.parse(r.body).data.id)).toContain(order.id);
    // Its log kept every delivery, the one of the event written while it was disabled excepted.
    expect((await logOf(t, key, endpoint)).map((d) => d.state)).toEqual(['succeeded', 'failed']);
  });

  it('disables an endpoint whose last WEBHOOK_DISABLE_AFTER deliveries all failed (a delivery fails when its last attempt does)', async () => {
    const env = { WEBHOOK_DISABLE_AFTER: '3', WEBHOOK_RETRY_SCHEDULE: '5s' };
    const { t, receiver } = await setUp({ env, random: () => 0 });
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    const failOne = async () => {
      await placeOrder(t, key);
      await t.dispatcher.runDue();
      t.clock.advance(5_000);
      await t.dispatcher.runDue();
    };
    await failOne();
    await failOne();
    // A success in between starts the count again.
    receiver.answers.push(200);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    await failOne();
    await failOne();
    expect(json(await webhooksAs(t, key).get(`/webhook-endpoints/${endpoint.id}`))).toMatchObject({ enabled: true });
    await failOne();
    expect(json(await webhooksAs(t, key).get(`/webhook-endpoints/${endpoint.id}`))).toMatchObject({
      enabled: false,
      disabledReason: 'failing',
    });
    expect((await logOf(t, key, endpoint)).map((d) => d.state)).toEqual([
      'failed',
      'failed',
      'failed',
      'succeeded',
      'failed',
      'failed',
    ]);
  });
});
