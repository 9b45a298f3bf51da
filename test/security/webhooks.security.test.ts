import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { type Delivery, type EndpointWithSecret, endpointAt, placeOrder } from '../helpers/webhooks.js';

/**
 * Endpoints and their deliveries belong to the key that made them: another key, over a real socket
 *, neither sees them nor learns they exist, nor changes, tests, rotates or redelivers them.
 */

describe('over a real socket', () => {
  let t: TestApp;
  let base: string;
  let receiver: Receiver;
  let alice: string;
  let mallory: string;
  let endpoint: EndpointWithSecret;
  let delivery: Delivery;

  const call = (key: string, method: string, path: string, body?: object) =>
    fetch(`${base}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body && JSON.stringify(body),
    });

  beforeAll(async () => {
    t = await testApp({ overSocket: true });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    receiver = await startReceiver();
    alice = await t.newKey('business');
    mallory = await t.newKey('business');
    endpoint = await endpointAt(t, alice, receiver.url);
    await placeOrder(t, alice);
    await t.dispatcher.runDue();
    delivery = (
      (await (await call(alice, 'GET', `/webhook-endpoints/${endpoint.id}/deliveries`)).json()) as { data: Delivery[] }
    ).data[0]!;
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  describe('another key’s webhooks', () => {
    it('are not listed', async () => {
      expect(((await (await call(mallory, 'GET', '/webhook-endpoints')).json()) as { data: unknown[] }).data).toEqual(
        [],
      );
    });

    it.each([
      ['GET', () => `/webhook-endpoints/${endpoint.id}`],
      ['PATCH', () => `/webhook-endpoints/${endpoint.id}`, { enabled: false }],
      ['DELETE', () => `/webhook-endpoints/${endpoint.id}`],
      ['POST', () => `/webhook-endpoints/${endpoint.id}/rotate-secret`],
      ['POST', () => `/webhook-endpoints/${endpoint.id}/test`],
      ['GET', () => `/webhook-endpoints/${endpoint.id}/deliveries`],
      ['POST', () => `/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/retry`],
    ] as const)(
      '%s %s is the 404 of an endpoint nobody has, and changes nothing',
      async (method, path, body?: object) => {
        const theirs = await call(mallory, method, path(), body);
        const nobodys = await call(mallory, method, path().replace(endpoint.id, 'we_000000000000000000000000'), body);
        expect(theirs.status).toBe(404);
        expect(((await theirs.json()) as { detail: string }).detail).toBe(
          ((await nobodys.json()) as { detail: string }).detail.replace('we_000000000000000000000000', endpoint.id),
        );
        const mine = (await (await call(alice, 'GET', `/webhook-endpoints/${endpoint.id}`)).json()) as {
          enabled: boolean;
          secretHint: string;
        };
        expect(mine).toMatchObject({ enabled: true, secretHint: `${endpoint.secret.slice(0, 10)}…` });
      },
    );

    it('cannot redeliver another endpoint’s delivery through one of its own', async () => {
      const own = (await (await call(mallory, 'POST', '/webhook-endpoints', { url: receiver.url })).json()) as {
        id: string;
      };
      expect((await call(mallory, 'POST', `/webhook-endpoints/${own.id}/deliveries/${delivery.id}/retry`)).status).toBe(
        404,
      );
      const received = receiver.received.length;
      await t.dispatcher.runDue();
      expect(receiver.received).toHaveLength(received);
    });

    it('never shows the secret again, to anyone', async () => {
      for (const key of [alice, mallory]) {
        for (const path of [
          '/webhook-endpoints',
          `/webhook-endpoints/${endpoint.id}`,
          `/webhook-endpoints/${endpoint.id}/deliveries`,
        ]) {
          expect(await (await call(key, 'GET', path)).text()).not.toContain(endpoint.secret.slice('whsec_'.length, 30));
        }
      }
    });
  });
});
