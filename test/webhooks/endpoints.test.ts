import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/orders.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import {
  type Delivery,
  type EndpointWithSecret,
  endpointAt,
  placeOrder,
  verifiedByReference,
  webhooksAs,
} from '../helpers/webhooks.js';

/** The endpoints of a key, through the API (docs/webhooks.md). */

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

describe('an endpoint', () => {
  it('is created with its secret, whsec_ and 32 bytes in base64, shown this once; afterwards only its first characters', async () => {
    const key = await t.newKey('business');
    const response = await webhooksAs(t, key).create({
      url: receiver.url,
      events: ['order.approved'],
      description: 'orders',
    });
    expect(response.statusCode).toBe(201);
    expect(response.headers['cache-control']).toBe('no-store');
    const created = json<EndpointWithSecret & { secretHint: string; createdAt: string }>(response);
    expect(created).toMatchObject({
      url: receiver.url,
      events: ['order.approved'],
      description: 'orders',
      enabled: true,
      disabledReason: null,
    });
    expect(created.id).toMatch(/^we_[0-9a-f]{24}$/);
    expect(Buffer.from(created.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const shown = await webhooksAs(t, key).get(`/webhook-endpoints/${created.id}`);
    expect(shown.body).not.toContain(created.secret.slice('whsec_'.length, 20));
    const { secret: _, ...rest } = created;
    expect(json(shown)).toEqual({ ...rest, secretHint: `${created.secret.slice(0, 10)}…` });
  });

  it('is listed, changed, and deleted with its log', async () => {
    const key = await t.newKey('business');
    const a = await endpointAt(t, key, `${receiver.url}?a`);
    const b = await endpointAt(t, key, `${receiver.url}?b`);
    const ids = [a.id, b.id].sort();
    const first = json<{ data: Array<{ id: string }>; nextCursor: string }>(
      await webhooksAs(t, key).get('/webhook-endpoints?limit=1'),
    );
    const second = json<{ data: Array<{ id: string }>; nextCursor: null }>(
      await webhooksAs(t, key).get(`/webhook-endpoints?limit=1&cursor=${first.nextCursor}`),
    );
    expect([...first.data, ...second.data].map((e) => e.id)).toEqual(ids);
    expect(second.nextCursor).toBeNull();

    const changed = json(
      await webhooksAs(t, key).patch(a.id, {
        url: `${receiver.url}?c`,
        events: ['order.delivered'],
        description: 'changed',
      }),
    );
    expect(changed).toMatchObject({
      url: `${receiver.url}?c`,
      events: ['order.delivered'],
      description: 'changed',
      enabled: true,
    });
    expect(json(await webhooksAs(t, key).patch(a.id, { events: null }))).toMatchObject({ events: null });
    expect(json(await webhooksAs(t, key).patch(a.id, { enabled: false }))).toMatchObject({
      enabled: false,
      disabledReason: 'by-request',
    });

    const deleted = await webhooksAs(t, key).del(b.id);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expectProblem(await webhooksAs(t, key).get(`/webhook-endpoints/${b.id}`), 404, 'not-found');
    expectProblem(await webhooksAs(t, key).del(b.id), 404, 'not-found');
  });

  it('is one of at most 10 a key: the 11th is a 409', async () => {
    const key = await t.newKey('business');
    for (let i = 0; i < 10; i++) await endpointAt(t, key, `${receiver.url}?${i}`);
    expectProblem(await webhooksAs(t, key).create({ url: receiver.url }), 409, 'webhook-endpoint-limit');
  });

  it.each([
    ['ftp://example.com/hooks', 'only http and https'],
    ['http://user:pass@example.com/hooks', 'credentials'],
    ['not a url', 'url'],
  ])('refuses %s with a 400 naming why', async (url, why) => {
    const key = await t.newKey('business');
    const response = await webhooksAs(t, key).create({ url });
    expectProblem(response, 400, 'invalid-request');
    expect(JSON.stringify(json(response).errors)).toContain(why);
    expect(json(await webhooksAs(t, key).get('/webhook-endpoints')).data).toEqual([]);
  });

  it('refuses what is not one: an unknown member, an unknown event type, an empty patch', async () => {
    const key = await t.newKey('business');
    expectProblem(await webhooksAs(t, key).create({ url: receiver.url, secret: 'mine' }), 400, 'invalid-request');
    expectProblem(
      await webhooksAs(t, key).create({ url: receiver.url, events: ['order.shipped'] }),
      400,
      'invalid-request',
    );
    const endpoint = await endpointAt(t, key, receiver.url);
    expectProblem(await webhooksAs(t, key).patch(endpoint.id, {}), 400, 'invalid-request');
    expectProblem(await webhooksAs(t, key).get('/webhook-endpoints/we_nope'), 400, 'invalid-request');
  });

  it('is created once for one Idempotency-Key: the replay answers the same endpoint and secret', async () => {
    const key = await t.newKey('business');
    const once = { 'idempotency-key': 'endpoint-1' };
    const first = await webhooksAs(t, key).create({ url: receiver.url }, once);
    const replay = await webhooksAs(t, key).create({ url: receiver.url }, once);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json(replay)).toEqual(json(first));
    expect(json(await webhooksAs(t, key).get('/webhook-endpoints')).data).toHaveLength(1);
    expectProblem(
      await webhooksAs(t, key).create({ url: `${receiver.url}?other` }, once),
      422,
      'idempotency-key-reused',
    );
  });
});

describe('rotating the secret', () => {
  it('answers a new one, once; a retry with the same Idempotency-Key answers the same', async () => {
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    const url = `/webhook-endpoints/${endpoint.id}/rotate-secret`;
    const rotated = json<EndpointWithSecret>(await webhooksAs(t, key).post(url, { 'idempotency-key': 'rotate-1' }));
    const replay = await webhooksAs(t, key).post(url, { 'idempotency-key': 'rotate-1' });
    expect(json(replay)).toEqual(rotated);
    expect(rotated.secret).not.toBe(endpoint.secret);
    const again = json<EndpointWithSecret>(await webhooksAs(t, key).post(url));
    expect(again.secret).not.toBe(rotated.secret);
  });
});

describe('the test event and the delivery log', () => {
  it('sends webhook.test to that endpoint alone, logs it, and sends it again on request with the same webhook-id', async () => {
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    const other = await endpointAt(t, key, `${receiver.url}?other`);
    const before = receiver.received.length;
    const accepted = await webhooksAs(t, key).post(`/webhook-endpoints/${endpoint.id}/test`);
    expect(accepted.statusCode).toBe(202);
    const delivery = json<Delivery>(accepted);
    expect(delivery).toMatchObject({ type: 'webhook.test', state: 'pending', attempts: [] });
    await t.dispatcher.runDue();
    const sent = receiver.received.slice(before);
    expect(sent).toHaveLength(1);
    expect(verifiedByReference(endpoint.secret, sent[0]!)).toMatchObject({
      id: delivery.eventId,
      type: 'webhook.test',
      data: { endpointId: endpoint.id },
    });
    expect(json(await webhooksAs(t, key).get(`/events/${delivery.eventId}`))).toMatchObject({
      type: 'webhook.test',
      data: { endpointId: endpoint.id },
    });
    expect(json(await webhooksAs(t, key).get(`/webhook-endpoints/${other.id}/deliveries`)).data).toEqual([]);

    const log = json<{ data: Delivery[] }>(
      await webhooksAs(t, key).get(`/webhook-endpoints/${endpoint.id}/deliveries`),
    );
    expect(log.data).toEqual([
      {
        ...delivery,
        state: 'succeeded',
        nextAttemptAt: null,
        attempts: [{ at: new Date(t.clock()).toISOString(), status: 200, ms: expect.any(Number) }],
      },
    ]);
    const retried = await webhooksAs(t, key).post(`/webhook-endpoints/${endpoint.id}/deliveries/${delivery.id}/retry`);
    expect(retried.statusCode).toBe(202);
    expect(json(retried)).toMatchObject({ state: 'pending', nextAttemptAt: new Date(t.clock()).toISOString() });
    await t.dispatcher.runDue();
    expect(receiver.received.slice(before).map((r) => r.headers['webhook-id'])).toEqual([
      delivery.eventId,
      delivery.eventId,
    ]);
    expect(
      json<{ data: Delivery[] }>(await webhooksAs(t, key).get(`/webhook-endpoints/${endpoint.id}/deliveries`)).data[0]!
        .attempts,
    ).toHaveLength(2);
  });

  it('pages the log newest first without skipping or repeating', async () => {
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000 });
    const endpoint = await endpointAt(t, key, receiver.url);
    for (let i = 0; i < 7; i++) await placeOrder(t, key);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: Delivery[]; nextCursor: string | null } = json(
        await webhooksAs(t, key).get(
          `/webhook-endpoints/${endpoint.id}/deliveries?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
        ),
      );
      seen.push(...page.data.map((d) => d.id));
      cursor = page.nextCursor;
      await placeOrder(t, key);
    } while (cursor !== null);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
  });

  it('answers 404 for a delivery or endpoint the key does not have', async () => {
    const key = await t.newKey('business');
    const endpoint = await endpointAt(t, key, receiver.url);
    expectProblem(
      await webhooksAs(t, key).post(`/webhook-endpoints/${endpoint.id}/deliveries/dlv_zzzz/retry`),
      404,
      'not-found',
    );
    expectProblem(
      await webhooksAs(t, key).post('/webhook-endpoints/we_000000000000000000000000/test'),
      404,
      'not-found',
    );
    expectProblem(
      await webhooksAs(t, key).get('/webhook-endpoints/we_000000000000000000000000/deliveries'),
      404,
      'not-found',
    );
  });
});
