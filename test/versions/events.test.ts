import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION, OLDEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { endpointAt, placeOrder, verifiedByReference } from '../helpers/webhooks.js';

/** Events and webhook payloads carry the version that shaped them (docs/versions.md). */
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

describe('events in versions', () => {
  it('GET /events follows the request’s version: its apiVersion, and its order in that version’s shape', async () => {
    const key = await t.newKey('business');
    await placeOrder(t, key);
    const read = async (version?: string) =>
      json(
        await t.app.inject({
          url: '/events',
          headers: { 'x-api-key': key, ...(version ? { 'petstore-version': version } : {}) },
        }),
      ).data[0];
    const newest = await read();
    expect(newest).toMatchObject({ type: 'order.placed', apiVersion: NEWEST_VERSION });
    expect(Object.keys(newest)).toEqual(['id', 'type', 'timestamp', 'livemode', 'apiVersion', 'data']);
    expect(newest.data).not.toHaveProperty('complete');
    const oldest = await read(OLDEST_VERSION);
    expect(oldest).toMatchObject({
      id: newest.id,
      apiVersion: OLDEST_VERSION,
      data: { ...newest.data, complete: false },
    });
    const one = json(
      await t.app.inject({
        url: `/events/${newest.id}`,
        headers: { 'x-api-key': key, 'petstore-version': OLDEST_VERSION },
      }),
    );
    expect(one).toEqual(oldest);
  });

  it('a webhook delivery is shaped by the version the owner’s key is pinned to when it is sent', async () => {
    const made = await t.keys.create({ plan: 'business', apiVersion: OLDEST_VERSION });
    const endpoint = await endpointAt(t, made.key, receiver.url);
    await placeOrder(t, made.key);
    expect(await t.dispatcher.runDue()).toBe(1);
    const old = verifiedByReference(endpoint.secret, receiver.received.at(-1)!) as {
      apiVersion: string;
      data: Record<string, unknown>;
    };
    expect(old).toMatchObject({ type: 'order.placed', apiVersion: OLDEST_VERSION, data: { complete: false } });
    // The same as the key's own GET /events/{id} answers without a header.
    const id = receiver.received.at(-1)!.headers['webhook-id'];
    expect(receiver.received.at(-1)!.body).toBe(
      (await t.app.inject({ url: `/events/${id}`, headers: { 'x-api-key': made.key } })).body,
    );

    await t.keys.setVersion(made.record.id, NEWEST_VERSION);
    await placeOrder(t, made.key);
    expect(await t.dispatcher.runDue()).toBe(1);
    const current = verifiedByReference(endpoint.secret, receiver.received.at(-1)!) as {
      apiVersion: string;
      data: Record<string, unknown>;
    };
    expect(current.apiVersion).toBe(NEWEST_VERSION);
    expect(current.data).not.toHaveProperty('complete');
  });
});
