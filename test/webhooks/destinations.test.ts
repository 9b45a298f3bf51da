import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NOT_ALLOWED } from '../../src/webhooks/destinations.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/orders.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { type Delivery, endpointAt, placeOrder, webhooksAs } from '../helpers/webhooks.js';

/** Where webhooks may go, and what a delivery will not do for a receiver (docs/webhooks.md). */

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0)) await thing.close();
});

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await testApp({ env });
  open.push(t);
  return t;
}

async function receiver(answer: Receiver['otherwise'] = 200): Promise<Receiver> {
  const r = await startReceiver(answer);
  open.push(r);
  return r;
}

const lastDelivery = async (t: TestApp, key: string, endpointId: string) =>
  json<{ data: Delivery[] }>(await webhooksAs(t, key).get(`/webhook-endpoints/${endpointId}/deliveries`)).data[0]!;

describe('in production', () => {
  it.each([
    'http://127.0.0.1:8080/hooks',
    'http://localhost:8080/hooks',
    'http://169.254.169.254/latest/meta-data',
    'http://10.1.2.3/hooks',
    'http://192.168.0.10/hooks',
    'http://172.16.5.4/hooks',
    'http://[::1]/hooks',
    'http://[::ffff:127.0.0.1]/hooks',
    'http://[fd00:ec2::254]/hooks',
    'http://0.0.0.0/hooks',
    'http://127.1/hooks',
    'http://2130706433/hooks',
    'http://[::127.0.0.1]/hooks',
    'http://[64:ff9b::10.0.0.1]/hooks',
    'http://[2002:7f00:1::]/hooks',
  ])('refuses %s at creation with a 400 that says only that the destination is not allowed', async (url) => {
    const t = await app({ NODE_ENV: 'production' });
    const key = await t.newKey('business');
    const response = await webhooksAs(t, key).create({ url });
    expectProblem(response, 400, 'invalid-request');
    expect(json(response).errors[0]).toEqual({ in: 'body', name: '/url', message: NOT_ALLOWED });
    // Nothing says where a name leads inside the service's network.
    expect(response.body).not.toMatch(/127\.0\.0\.1|::1\b|resolves/);
  });

  it('refuses a name that resolves inside in the same words as an address, without saying what it resolves to', async () => {
    const t = await app({ NODE_ENV: 'production' });
    const key = await t.newKey('business');
    const byName = await webhooksAs(t, key).create({ url: 'http://localhost:8080/hooks' });
    const byAddress = await webhooksAs(t, key).create({ url: 'http://127.0.0.1:8080/hooks' });
    expect(json(byName).detail).toBe(json(byAddress).detail);
    expect(json(byName).errors).toEqual(json(byAddress).errors);
    expect(byName.body).not.toMatch(/127\.0\.0\.1|::1\b|resolves/);
  });

  it('allows private destinations with WEBHOOK_ALLOW_PRIVATE=true, and everywhere outside production (a learner’s receiver runs on localhost)', async () => {
    for (const env of [{ NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE: 'true' }, {}] as Record<string, string>[]) {
      const t = await app(env);
      const key = await t.newKey('business');
      expect((await webhooksAs(t, key).create({ url: 'http://127.0.0.1:9/hooks' })).statusCode).toBe(201);
    }
  });

  it('checks the address a delivery connects to: a name that resolves to 127.0.0.1 is refused then too, and nothing is sent', async () => {
    const r = await receiver();
    const t = await app({ NODE_ENV: 'production' });
    const { record, key } = await t.keys.create({ plan: 'business' });
    // Made before the policy could judge it (as a name whose address changed since would be).
    const [id] = await storeEndpoints(t, record.id, [`http://localhost:${new URL(r.url).port}/hooks`]);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    expect(r.received).toEqual([]);
    const delivery = await lastDelivery(t, key, id!);
    expect(delivery.attempts[0]!.error).toBe(`refused: ${NOT_ALLOWED}`);
    expect(delivery.state).toBe('pending');
  });

  it('refuses a stored URL that names a loopback address, in any spelling, before any connection (the real sender)', async () => {
    const listener = await countingListener();
    const t = await app({ NODE_ENV: 'production' });
    const { record, key } = await t.keys.create({ plan: 'business' });
    const p = listener.port;
    // Saved while the check did not apply: outside production, with WEBHOOK_ALLOW_PRIVATE, or by another instance.
    const urls = [
      `http://127.0.0.1:${p}/`,
      `http://127.1:${p}/`,
      `http://2130706433:${p}/`,
      `http://[::1]:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://0.0.0.0:${p}/`,
      `http://[::]:${p}/`,
      `http://[::127.0.0.1]:${p}/`,
    ];
    const ids = await storeEndpoints(t, record.id, urls);
    await placeOrder(t, key);
    expect(await t.dispatcher.runDue()).toBe(urls.length);
    expect(listener.connections).toBe(0);
    for (const id of ids) {
      expect((await lastDelivery(t, key, id)).attempts).toEqual([
        expect.objectContaining({ error: `refused: ${NOT_ALLOWED}` }),
      ]);
    }
  });

  it('judges a stored URL again when the endpoint is enabled: PATCH {"enabled": true} of a loopback one is a 400, and it stays disabled', async () => {
    const t = await app({ NODE_ENV: 'production' });
    const { record, key } = await t.keys.create({ plan: 'business' });
    const [id] = await storeEndpoints(t, record.id, ['http://127.0.0.1:9/hooks'], { enabled: 0 });
    const response = await webhooksAs(t, key).patch(id!, { enabled: true });
    expectProblem(response, 400, 'invalid-request');
    expect(json(response).errors[0]).toEqual({ in: 'body', name: '/url', message: NOT_ALLOWED });
    expect(json(await webhooksAs(t, key).get(`/webhook-endpoints/${id}`)).enabled).toBe(false);
  });
});

/** Endpoints written straight into the store, as if saved while the policy did not apply; their ids. */
async function storeEndpoints(
  t: TestApp,
  owner: string,
  urls: string[],
  overrides: { enabled?: number } = {},
): Promise<string[]> {
  const ids = urls.map((_, i) => `we_${String(i + 1).padStart(24, '0')}`);
  await t.db
    .insertInto('webhook_endpoints')
    .values(
      urls.map((url, i) => ({
        id: ids[i]!,
        api_key_id: owner,
        url,
        description: '',
        events: null,
        secret: `whsec_${Buffer.alloc(32).toString('base64')}`,
        previous_secret: null,
        previous_until: null,
        livemode: 1,
        created_at: new Date(t.clock()).toISOString(),
        ...overrides,
      })),
    )
    .execute();
  return ids;
}

/** A TCP listener on every loopback address (IPv4 and IPv6) that counts the connections it is offered. */
async function countingListener(): Promise<{ port: number; connections: number }> {
  const counted = { port: 0, connections: 0 };
  const server = createNetServer((socket) => {
    counted.connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '::', ipv6Only: false }, resolve));
  counted.port = (server.address() as AddressInfo).port;
  open.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return counted;
}

describe('a delivery', () => {
  it('does not follow a redirect: a 3xx is an answer, and a failed one', async () => {
    const elsewhere = await receiver();
    const r = await receiver({ status: 307, headers: { location: elsewhere.url } });
    const t = await app();
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, r.url);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    expect(elsewhere.received).toEqual([]);
    expect(await lastDelivery(t, key, endpoint.id)).toMatchObject({ state: 'pending', attempts: [{ status: 307 }] });
  });

  it('reads at most 64 KB of an answer: a receiver that streams without end does not hold the attempt', async () => {
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const more = () => {
        while (response.write(chunk));
        response.once('drain', more);
      };
      more();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push({
      close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
    });
    const t = await app({ WEBHOOK_TIMEOUT_SECONDS: '30' });
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    expect(await lastDelivery(t, key, endpoint.id)).toMatchObject({ state: 'succeeded', attempts: [{ status: 200 }] });
  });

  it('takes the status as the answer: a 200 whose body trickles past the timeout succeeds, and is not sent again', async () => {
    const trickling: Array<NodeJS.Timeout> = [];
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/plain' });
      trickling.push(setInterval(() => response.write('.'), 100));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push({
      close: () =>
        new Promise<void>(
          (resolve) => (trickling.forEach(clearInterval), server.closeAllConnections(), server.close(() => resolve())),
        ),
    });
    const t = await app({ WEBHOOK_TIMEOUT_SECONDS: '1' });
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    expect(await lastDelivery(t, key, endpoint.id)).toMatchObject({
      state: 'succeeded',
      nextAttemptAt: null,
      attempts: [{ status: 200 }],
    });
    expect(trickling).toHaveLength(1);
  });

  it('gives up on a receiver that does not answer within WEBHOOK_TIMEOUT_SECONDS, and tries again on its schedule', async () => {
    const r = await receiver('hang');
    const t = await app({ WEBHOOK_TIMEOUT_SECONDS: '1' });
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, r.url);
    await placeOrder(t, key);
    await t.dispatcher.runDue();
    const delivery = await lastDelivery(t, key, endpoint.id);
    expect(delivery).toMatchObject({ state: 'pending', attempts: [{ error: 'no answer within 1 s' }] });
    expect(delivery.attempts[0]!.ms).toBeGreaterThanOrEqual(1_000);
  });
});
