import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookAtStoreFiles } from '../../src/db/database.js';
import { type TestApp, testApp } from '../helpers/app.js';
import {
  type Answer,
  streamTraffic,
  testModeSamples,
  testModeTraffic,
  threeAtOnce,
  Validators,
} from '../helpers/conformance.js';
import { tempDir } from '../helpers/process.js';

/**
 * Real traffic against the served document, checked by two independent validators: Prism's validating
 * proxy, through which every request goes over a socket, and openapi-backend (../helpers/conformance.ts).
 * The requests reach every status of every operation: `304`s, a test key's forced faults, both kinds
 * of `429`, retries while the original is in progress, the key store failing and out of reach.
 */
let t: TestApp;
let validators: Validators;

beforeAll(async () => {
  // A small BODY_LIMIT, so that the body a 413 refuses arrives whole with its headers: a body of
  // megabytes is still arriving when the service answers and closes, and the proxy, still sending,
  // may then lose the answer to the connection's reset (seen once on a busy machine).
  t = await testApp({ env: { ADMIN_TOKEN: 'admin-token-for-tests-0123456789', BODY_LIMIT: '4096' } });
  validators = await Validators.start(t);
});
afterAll(async () => {
  await validators?.stop();
  await t.close();
});

/**
 * `/usage` on another service whose embedded store's files were deleted from under it
 * (test/db/store-files.test.ts): a key not held in memory cannot be checked, a `503`. What both
 * validators met there counts as met here.
 */
async function usageOutOfReach(): Promise<void> {
  const file = join(tempDir(), 'petstore.db');
  const elsewhere = await testApp({ sqliteFile: file });
  const checked = await Validators.start(elsewhere);
  try {
    const {
      key,
      record: { id },
    } = await elsewhere.keys.create({ plan: 'free' });
    unlinkSync(file);
    lookAtStoreFiles(elsewhere.db);
    expect((await checked.send('getUsage', { url: '/usage', headers: { 'x-api-key': key } })).statusCode).toBe(503);
    expect((await checked.send('getAccessToken', tokenRequest(id, key))).statusCode).toBe(503);
    expect((await checked.send('getJsonWebKeySet', { url: '/.well-known/jwks.json' })).statusCode).toBe(503);
    for (const [operationId, options] of Object.entries(testModeSamples)) {
      expect(
        (await checked.send(operationId, { ...options, headers: { 'x-api-key': key } })).statusCode,
        operationId,
      ).toBe(503);
    }
    validators.seen.push(...checked.seen);
    validators.mismatches.push(...checked.mismatches);
  } finally {
    await checked.stop();
    await elsewhere.close();
  }
}

/** A token request of a key's, by HTTP Basic. */
function tokenRequest(id: string, key: string, form = 'grant_type=client_credentials'): InjectOptions {
  const authorization = `Basic ${Buffer.from(`${id}:${key}`).toString('base64')}`;
  return {
    method: 'POST',
    url: '/oauth/token',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    payload: form,
  };
}

/**
 * The token endpoint's answers and its discovery, and every operation that needs a scope met by a token without
 * it (a 403): a token of `pets:read` for every operation but the pets', one of `orders:read` for those.
 */
async function tokenTraffic(send: (operationId: string, options: InjectOptions) => Promise<Answer>): Promise<void> {
  await send('getAuthorizationServerMetadata', { url: '/.well-known/oauth-authorization-server' });
  await send('getAuthorizationServerMetadata', { url: '/.well-known/oauth-authorization-server?all=1' });
  await send('getJsonWebKeySet', { url: '/.well-known/jwks.json' });
  await send('getJsonWebKeySet', { url: '/.well-known/jwks.json?all=1' });
  const { key, record } = await t.keys.create({ plan: 'enterprise', perMinute: 1000, perDay: 10_000 });
  await send('getAccessToken', tokenRequest(record.id, 'pet_notakeynotakeynotakeynotakey00'));
  await send('getAccessToken', tokenRequest(record.id, key, 'grant_type=password'));
  const token = async (scope: string) =>
    JSON.parse(
      (await send('getAccessToken', tokenRequest(record.id, key, `grant_type=client_credentials&scope=${scope}`))).body,
    ).access_token as string;
  const [pets, orders] = [await token('pets:read'), await token('orders:read')];
  const doc = JSON.parse((await t.request({ url: '/openapi.json' })).body);
  for (const [path, methods] of Object.entries(
    doc.paths as Record<string, Record<string, { operationId: string; security?: Record<string, string[]>[] }>>,
  ))
    for (const [method, op] of Object.entries(methods)) {
      const scope = op.security?.find((scheme) => 'OAuth2' in scheme)?.OAuth2?.[0];
      if (scope === undefined) continue;
      const answer = await send(op.operationId, {
        method: method.toUpperCase() as InjectOptions['method'],
        url: path.replace(/\{[^}]+\}/g, 'x_1'),
        headers: { authorization: `Bearer ${scope === 'pets:read' ? orders : pets}` },
      });
      expect(answer.statusCode, `${method} ${path}`).toBe(403);
    }
}

// Every operation, through Prism's proxy and openapi-backend: some seconds alone, more beside other suites.
describe('every response of real traffic conforms to the served document', { timeout: 60_000 }, () => {
  it('through every operation, its successes and its errors, a ban included', async () => {
    const {
      key,
      record: { id: keyId },
    } = await t.keys.create({ plan: 'free' });
    const other = await t.newKey('pro');
    const as = (k: string, extra: Record<string, string> = {}) => ({ 'x-api-key': k, ...extra });
    const send = (operationId: string, options: InjectOptions) => validators.send(operationId, options);
    // A read again with its ETag: a 304.
    const revalidate = async (operationId: string, options: InjectOptions & { headers: Record<string, string> }) => {
      const { etag } = (await send(operationId, options)).headers;
      expect(etag, operationId).toBeDefined();
      expect(
        (await send(operationId, { ...options, headers: { ...options.headers, 'if-none-match': etag! } })).statusCode,
      ).toBe(304);
    };

    await send('listPets', { url: '/pets?limit=2', headers: as(key) });
    await send('listPets', { url: '/pets?limit=0', headers: as(key) });
    await send('listPets', { url: '/pets' });
    await send('getPet', { url: '/pets/1', headers: as(key) });
    await tokenTraffic(send);
    await send('getPet', { url: '/pets/999', headers: as(key) });
    await send('getPet', { url: '/pets/abc', headers: as(key) });
    await send('getPet', { url: '/pets/1', headers: as('pet_unknownunknownunknownunknownunkn') });
    const pending = JSON.parse((await t.app.inject({ url: '/pets?status=pending', headers: as(other) })).body).data[0]
      .id as number;
    const placed = await send('placeOrder', {
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'idempotency-key': 'k1' }),
      payload: { petId: 1, quantity: 2 },
    });
    await send('placeOrder', {
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'idempotency-key': 'k1' }),
      payload: { petId: 1, quantity: 2 },
    });
    await send('placeOrder', {
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'idempotency-key': 'k1' }),
      payload: { petId: 2 },
    });
    // The Structured Field form of the same key: the replay; and retries while the original is in
    // progress (409).
    await send('placeOrder', {
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'idempotency-key': '"k1"' }),
      payload: { petId: 1, quantity: 2 },
    });
    const atOnce = await threeAtOnce(t.db, () =>
      send('placeOrder', {
        method: 'POST',
        url: '/store/orders',
        headers: as(key, { 'idempotency-key': 'k-at-once' }),
        payload: { petId: 1 },
      }),
    );
    expect(atOnce).toEqual([201, 409, 409]);
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key), payload: { petId: 999 } });
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key), payload: { petId: pending } });
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key), payload: { quantity: 0 } });
    await send('placeOrder', {
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'content-type': 'text/plain' }),
      payload: 'x',
    });
    await send('placeOrder', {
      method: 'POST',
      url: '/store/orders',
      headers: as(key),
      payload: { petId: 1, note: 'x'.repeat(20_000) },
    });
    const orderId = JSON.parse(placed.body).id as number;
    await send('listOrders', { url: '/store/orders', headers: as(key) });
    await send('listOrders', { url: '/store/orders?status=lost', headers: as(key) });
    await send('getOrder', { url: `/store/orders/${orderId}`, headers: as(key) });
    await send('getOrder', { url: `/store/orders/${orderId}`, headers: as(other) });
    await send('getOrder', { url: '/store/orders/0', headers: as(key) });
    await revalidate('listPets', { url: '/pets?limit=3', headers: as(key) });
    await revalidate('getPet', { url: '/pets/2', headers: as(key) });
    await revalidate('listOrders', { url: '/store/orders', headers: as(key) });
    await revalidate('getOrder', { url: `/store/orders/${orderId}`, headers: as(key) });
    await send('cancelOrder', { method: 'DELETE', url: `/store/orders/${orderId}`, headers: as(key) });
    await send('cancelOrder', { method: 'DELETE', url: '/store/orders/424242', headers: as(key) });
    const delivered = JSON.parse(
      (await t.app.inject({ method: 'POST', url: '/store/orders', headers: as(other), payload: { petId: 1 } })).body,
    ).id as number;
    await t.db.updateTable('orders').set({ status: 'delivered', complete: 1 }).where('id', '=', delivered).execute();
    await send('cancelOrder', { method: 'DELETE', url: `/store/orders/${delivered}`, headers: as(other) });
    // A test key moves its orders; events record every move.
    const tester = await t.newKey({ plan: 'pro', test: true });
    const moving = JSON.parse(
      (await t.app.inject({ method: 'POST', url: '/store/orders', headers: as(tester), payload: { petId: 1 } })).body,
    ).id as number;
    // A test key's faults, asked for: the real failures' answers.
    for (const fault of ['503', '500', '429']) {
      await send('listPets', { url: '/pets', headers: as(tester, { prefer: `fault=${fault}` }) });
      await send('getOrder', { url: `/store/orders/${moving}`, headers: as(tester, { prefer: `fault=${fault}` }) });
    }
    const advance = (k: string, id: number | string, extra: Record<string, string> = {}) =>
      send('advanceOrder', { method: 'POST', url: `/store/orders/${id}/advance`, headers: as(k, extra) });
    await advance(tester, moving, { 'idempotency-key': 'a1' });
    await advance(tester, moving, { 'idempotency-key': 'a1' });
    await advance(tester, orderId, { 'idempotency-key': 'a1' });
    await advance(tester, moving);
    await advance(tester, moving);
    await advance(tester, 424242);
    await advance(tester, 'x');
    await advance(other, delivered);
    const events = await send('listEvents', {
      url: '/events?type=order.placed&type=order.approved&limit=2',
      headers: as(tester),
    });
    await send('listEvents', { url: `/events?orderId=${moving}`, headers: as(tester) });
    await send('listEvents', { url: '/events?type=order.lost', headers: as(tester) });
    const eventId = JSON.parse(events.body).data[0].id as string;
    await send('getEvent', { url: `/events/${eventId}`, headers: as(tester) });
    await send('getEvent', { url: `/events/${eventId}`, headers: as(other) });
    await send('getEvent', { url: '/events/evt_x', headers: as(tester) });
    await streamTraffic(t, send, tester, eventId);
    // Webhook endpoints, their test event and their log.
    const hook = (
      method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
      url: string,
      payload?: object,
      extra: Record<string, string> = {},
    ) => ({
      method,
      url,
      headers: as(tester, extra),
      ...(payload ? { payload } : {}),
    });
    const made = await send(
      'createWebhookEndpoint',
      hook('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks' }, { 'idempotency-key': 'w1' }),
    );
    await send(
      'createWebhookEndpoint',
      hook('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks' }, { 'idempotency-key': 'w1' }),
    );
    await send(
      'createWebhookEndpoint',
      hook('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/other' }, { 'idempotency-key': 'w1' }),
    );
    await send('createWebhookEndpoint', hook('POST', '/webhook-endpoints', { url: 'ftp://x' }));
    const hookId = JSON.parse(made.body).id as string;
    await send('listWebhookEndpoints', hook('GET', '/webhook-endpoints?limit=1'));
    await send('listWebhookEndpoints', hook('GET', '/webhook-endpoints?cursor=nope'));
    await send('getWebhookEndpoint', hook('GET', `/webhook-endpoints/${hookId}`));
    await send('getWebhookEndpoint', hook('GET', '/webhook-endpoints/we_000000000000000000000000'));
    await send('getWebhookEndpoint', hook('GET', '/webhook-endpoints/nope'));
    await send(
      'updateWebhookEndpoint',
      hook('PATCH', `/webhook-endpoints/${hookId}`, { description: 'conformance', events: ['order.placed'] }),
    );
    await send('updateWebhookEndpoint', hook('PATCH', `/webhook-endpoints/${hookId}`, {}));
    await send(
      'updateWebhookEndpoint',
      hook('PATCH', '/webhook-endpoints/we_000000000000000000000000', { enabled: true }),
    );
    await send('rotateWebhookSecret', hook('POST', `/webhook-endpoints/${hookId}/rotate-secret`));
    await send('rotateWebhookSecret', hook('POST', '/webhook-endpoints/we_000000000000000000000000/rotate-secret'));
    const tested = await send('testWebhookEndpoint', hook('POST', `/webhook-endpoints/${hookId}/test`));
    await send('testWebhookEndpoint', hook('POST', '/webhook-endpoints/we_000000000000000000000000/test'));
    // The receiver exam: nothing listens there, so every case fails at once; a live key's is a 403.
    await send('examWebhookEndpoint', hook('POST', `/webhook-endpoints/${hookId}/exam`));
    await send('examWebhookEndpoint', hook('POST', '/webhook-endpoints/we_000000000000000000000000/exam'));
    await send('examWebhookEndpoint', { method: 'POST', url: `/webhook-endpoints/${hookId}/exam`, headers: as(key) });
    await send('listWebhookDeliveries', hook('GET', `/webhook-endpoints/${hookId}/deliveries`));
    await send('listWebhookDeliveries', hook('GET', '/webhook-endpoints/we_000000000000000000000000/deliveries'));
    await send(
      'retryWebhookDelivery',
      hook('POST', `/webhook-endpoints/${hookId}/deliveries/${JSON.parse(tested.body).id}/retry`),
    );
    await send('retryWebhookDelivery', hook('POST', `/webhook-endpoints/${hookId}/deliveries/dlv_zzz/retry`));
    await send('getEvent', { url: `/events/${JSON.parse(tested.body).eventId}`, headers: as(tester) });
    await testModeTraffic(t, send, { tester, live: key });
    // Every operation's common answers: without a key (401), and a test key's forced 500, 503 and 429.
    const deliveryId = JSON.parse(tested.body).id as string;
    const samples: Record<string, InjectOptions> = {
      listPets: { url: '/pets' },
      getPet: { url: '/pets/1' },
      placeOrder: { method: 'POST', url: '/store/orders', payload: { petId: 1 } },
      listOrders: { url: '/store/orders' },
      getOrder: { url: `/store/orders/${moving}` },
      cancelOrder: { method: 'DELETE', url: `/store/orders/${moving}` },
      advanceOrder: { method: 'POST', url: `/store/orders/${moving}/advance` },
      listEvents: { url: '/events' },
      streamEvents: { url: '/events/stream' },
      getEvent: { url: `/events/${eventId}` },
      createWebhookEndpoint: {
        method: 'POST',
        url: '/webhook-endpoints',
        payload: { url: 'http://127.0.0.1:9/common' },
      },
      listWebhookEndpoints: { url: '/webhook-endpoints' },
      getWebhookEndpoint: { url: `/webhook-endpoints/${hookId}` },
      updateWebhookEndpoint: { method: 'PATCH', url: `/webhook-endpoints/${hookId}`, payload: { enabled: true } },
      deleteWebhookEndpoint: { method: 'DELETE', url: `/webhook-endpoints/${hookId}` },
      rotateWebhookSecret: { method: 'POST', url: `/webhook-endpoints/${hookId}/rotate-secret` },
      testWebhookEndpoint: { method: 'POST', url: `/webhook-endpoints/${hookId}/test` },
      examWebhookEndpoint: { method: 'POST', url: `/webhook-endpoints/${hookId}/exam` },
      listWebhookDeliveries: { url: `/webhook-endpoints/${hookId}/deliveries` },
      retryWebhookDelivery: { method: 'POST', url: `/webhook-endpoints/${hookId}/deliveries/${deliveryId}/retry` },
      getUsage: { url: '/usage' },
      createTestKey: { method: 'POST', url: '/test-keys' },
      deleteTestKey: { method: 'DELETE', url: '/test-keys/key_00' },
      ...testModeSamples,
    };
    for (const [operationId, sample] of Object.entries(samples)) {
      await send(operationId, sample);
      // A version the API does not have: the 400 every operation may answer.
      await send(operationId, { ...sample, headers: as(tester, { 'petstore-version': '2020-01-01' }) });
      // count nothing: faults do not apply (their documents say so)
      if (operationId === 'getUsage' || operationId in testModeSamples) continue;
      for (const fault of ['500', '503', '429'])
        await send(operationId, { ...sample, headers: as(tester, { prefer: `fault=${fault}` }) });
      // Forced 429s count toward a ban like any other: a minute later they no longer do.
      t.clock.advance(61_000);
    }
    await send('getUsage', { url: '/usage', headers: as(other) });
    // The throttle of what counts nothing, the key's own: /usage's only 429.
    for (let i = 0; i < 700 && !validators.seen.includes('getUsage 429'); i++)
      await send('getUsage', { url: '/usage', headers: as(other) });
    // A test key of its own, its throttle spent: the 429 of every test-mode operation.
    const sampler = await t.newKey({ plan: 'pro', test: true });
    for (let i = 0; i < 700 && !validators.seen.includes('getTestClock 429'); i++)
      await send('getTestClock', { url: '/test-clock', headers: as(sampler) });
    for (const [operationId, options] of Object.entries(testModeSamples))
      await send(operationId, { ...options, headers: as(sampler) });
    // The versions and the scenarios share that throttle; before it, their lists; after it, their lists and a
    // parameter they do not take.
    await send('listVersions', { url: '/versions' });
    t.clock.advance(61_000);
    await send('listVersions', { url: '/versions' });
    await send('listVersions', { url: '/versions?all=1' });
    await send('listScenarios', { url: '/scenarios' });
    await send('listScenarios', { url: '/scenarios?all=1' });
    for (let i = 0; i < 700 && !validators.seen.includes('listVersions 429'); i++)
      await send('listVersions', { url: '/versions' });
    await send('listScenarios', { url: '/scenarios' });
    await send('getAuthorizationServerMetadata', { url: '/.well-known/oauth-authorization-server' });
    await send('getJsonWebKeySet', { url: '/.well-known/jwks.json' });
    t.clock.advance(61_000);
    // An Idempotency-Key reused with another request (422), and retries while the original is in progress (409).
    for (const [operationId, path, success] of [
      ['rotateWebhookSecret', `/webhook-endpoints/${hookId}/rotate-secret`, 200],
      ['testWebhookEndpoint', `/webhook-endpoints/${hookId}/test`, 202],
      ['retryWebhookDelivery', `/webhook-endpoints/${hookId}/deliveries/${deliveryId}/retry`, 202],
    ] as const) {
      await send(operationId, hook('POST', path, undefined, { 'idempotency-key': 'w1' }));
      const statuses = await threeAtOnce(t.db, () =>
        send(operationId, hook('POST', path, undefined, { 'idempotency-key': `at-once-${operationId}` })),
      );
      expect(statuses, operationId).toEqual([success, 409, 409]);
    }
    // A key's allowance of endpoints used up (409).
    for (let i = 0; i < 20 && !validators.seen.includes('createWebhookEndpoint 409'); i++)
      await send('createWebhookEndpoint', hook('POST', '/webhook-endpoints', { url: `http://127.0.0.1:9/many/${i}` }));
    // Ids of the wrong form (400), and bodies too large (413) or not JSON (415).
    await send('cancelOrder', { method: 'DELETE', url: '/store/orders/abc', headers: as(key) });
    for (const [operationId, method, path] of [
      ['deleteWebhookEndpoint', 'DELETE', '/webhook-endpoints/nope'],
      ['rotateWebhookSecret', 'POST', '/webhook-endpoints/nope/rotate-secret'],
      ['testWebhookEndpoint', 'POST', '/webhook-endpoints/nope/test'],
      ['examWebhookEndpoint', 'POST', '/webhook-endpoints/nope/exam'],
      ['listWebhookDeliveries', 'GET', '/webhook-endpoints/nope/deliveries'],
      ['retryWebhookDelivery', 'POST', `/webhook-endpoints/${hookId}/deliveries/nope/retry`],
    ] as const)
      await send(operationId, hook(method, path));
    for (const [operationId, method, path] of [
      ['createWebhookEndpoint', 'POST', '/webhook-endpoints'],
      ['updateWebhookEndpoint', 'PATCH', `/webhook-endpoints/${hookId}`],
    ] as const) {
      await send(operationId, hook(method, path, { description: 'x'.repeat(8_000) }));
      await send(operationId, {
        method,
        url: path,
        headers: as(tester, { 'content-type': 'text/plain' }),
        payload: 'x',
      });
    }
    await send('deleteWebhookEndpoint', hook('DELETE', `/webhook-endpoints/${hookId}`));
    await send('deleteWebhookEndpoint', hook('DELETE', `/webhook-endpoints/${hookId}`));
    // Rate limited, then banned.
    let response: Answer;
    do response = await send('listPets', { url: '/pets', headers: as(key) });
    while (response.statusCode !== 429);
    for (let i = 0; i < 10; i++) await send('getPet', { url: '/pets/1', headers: as(key) });
    expect(JSON.parse((await send('listOrders', { url: '/store/orders', headers: as(key) })).body).type).toMatch(
      /key-banned$/,
    );
    expect((await send('getAccessToken', tokenRequest(keyId, key))).statusCode).toBe(429);
    // Past the sunset.
    t.clock.set('2099-01-01T00:00:00Z');
    await send('getPet', { url: '/pets/1', headers: as(other) });
    // The store failing.
    await t.db.schema.alterTable('pets').renameTo('pets_gone').execute();
    await send('listPets', { url: '/pets', headers: as(other) });
    // A key not held in memory, looked up in a store that fails: /usage's 500.
    const {
      key: unseen,
      record: { id: unseenId },
    } = await t.keys.create({ plan: 'free' });
    await t.db.schema.alterTable('api_keys').renameTo('api_keys_gone').execute();
    expect((await send('getUsage', { url: '/usage', headers: as(unseen) })).statusCode).toBe(500);
    for (const [operationId, options] of Object.entries(testModeSamples))
      expect((await send(operationId, { ...options, headers: as(unseen) })).statusCode).toBe(500);
    expect((await send('getAccessToken', tokenRequest(unseenId, unseen))).statusCode).toBe(500);
    await t.db.schema.alterTable('oauth_signing_keys').renameTo('oauth_signing_keys_gone').execute();
    expect((await send('getJsonWebKeySet', { url: '/.well-known/jwks.json' })).statusCode).toBe(500);
    await usageOutOfReach();

    const { seen, mismatches } = validators;
    for (const status of [200, 201, 202, 204, 304, 400, 401, 403, 404, 409, 410, 413, 415, 422, 429, 500, 503]) {
      expect(
        seen.some((s) => s.endsWith(` ${status}`)),
        `a ${status} was exercised`,
      ).toBe(true);
    }
    expect(validators.missing()).toEqual([]);
    expect(mismatches).toEqual([]);
  });
});
