/**
 * The typed client's test clock and reset (docs/testing-clients.md#testing-your-client-in-seconds), against the real
 * server.
 */
import { afterEach, expect, it } from 'vitest';
import { ClockCannotGoBackError, PetstoreClient, TestKeyRequiredError, UnauthorizedError } from '../../client/index.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { clientOptions } from './harness.js';

let t: TestApp;
afterEach(async () => t.close());

it("moves a test key's clock, freezes and resumes it, and resets the key's data", async () => {
  t = await testApp();
  const client = new PetstoreClient(clientOptions(t.app, t.clock, await t.newKey({ plan: 'pro', test: true })));
  expect(await client.testClock.get()).toEqual({
    now: new Date(t.clock()).toISOString(),
    offsetSeconds: 0,
    frozen: false,
  });
  const advanced = await client.testClock.advance({ seconds: 3_600 }, { idempotencyKey: 'once' });
  expect(advanced.offsetSeconds).toBe(3_600);
  // A retry with the same Idempotency-Key moves nothing.
  expect(await client.testClock.advance({ seconds: 3_600 }, { idempotencyKey: 'once' })).toEqual(advanced);
  expect(await client.testClock.freeze()).toMatchObject({ frozen: true });
  expect(await client.testClock.resume()).toMatchObject({ frozen: false, offsetSeconds: 3_600 });
  await expect(client.testClock.advance({ to: '2001-01-01T00:00:00Z' })).rejects.toBeInstanceOf(ClockCannotGoBackError);
  await client.placeOrder({ petId: 1 });
  expect(await client.resetTestData()).toEqual({ orders: 1, events: 1, webhookEndpoints: 0, deliveries: 0 });
  expect((await client.testClock.get()).offsetSeconds).toBe(0);
});

it('makes a child test key once per Idempotency-Key, which works at once, and deletes it', async () => {
  t = await testApp();
  const client = new PetstoreClient(clientOptions(t.app, t.clock, await t.newKey({ plan: 'pro', test: true })));
  const child = await client.createTestKey({ idempotencyKey: 'job-1' });
  expect(await client.createTestKey({ idempotencyKey: 'job-1' })).toEqual(child);
  const childClient = new PetstoreClient(clientOptions(t.app, t.clock, child.key));
  expect((await childClient.testClock.advance({ seconds: 60 })).offsetSeconds).toBe(60);
  expect((await client.testClock.get()).offsetSeconds).toBe(0);
  await client.deleteTestKey(child.id);
  await expect(childClient.usage()).rejects.toBeInstanceOf(UnauthorizedError);
});

it('gives a live key TestKeyRequiredError', async () => {
  t = await testApp();
  const client = new PetstoreClient(clientOptions(t.app, t.clock, await t.newKey('pro')));
  await expect(client.testClock.get()).rejects.toBeInstanceOf(TestKeyRequiredError);
  await expect(client.resetTestData()).rejects.toBeInstanceOf(TestKeyRequiredError);
});
