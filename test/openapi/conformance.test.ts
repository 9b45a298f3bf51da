import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { OpenAPIBackend, SetMatchType } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.js';

/**
 * Real traffic against the served document, checked by an independent validator (openapi-backend,
 * its own Ajv): every response's status must be documented for its operation, its media type must
 * be the documented one, its body must match that schema, its headers must match the declared ones,
 * and every header the document declares required for that response must be present.
 */
interface Doc {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, Resp> }>>;
  components: { headers: Record<string, { schema: object; required?: boolean }> };
}
type Header = { $ref: string } | { schema: object; required?: boolean };
interface Resp {
  content?: Record<string, { schema: object }>;
  headers?: Record<string, Header>;
}

/** Whether the document says the header is always there (`required`, on it or on the component it names). */
function requiredHeader(header: Header): boolean {
  const resolved = '$ref' in header ? doc.components.headers[header.$ref.split('/').pop()!] : header;
  return resolved?.required === true;
}

let t: TestApp;
let doc: Doc;
let api: OpenAPIBackend;
const seen: string[] = [];
const mismatches: string[] = [];

beforeAll(async () => {
  t = await testApp({ env: { ADMIN_TOKEN: 'admin-token-for-tests-0123456789' } });
  doc = JSON.parse((await t.app.inject({ url: '/openapi.json' })).body) as Doc;
  // openapi-backend validates `application/json` bodies only; problems are `application/problem+json`.
  // Its copy of the document lists each body under `application/json` (same schema), and this test
  // checks the real media type itself.
  const asJson = JSON.parse(JSON.stringify(doc).replaceAll('"application/problem+json"', '"application/json"')) as Doc;
  // It also takes every declared header as required, whatever `required` says: its copy leaves the
  // optional ones out, and this test checks those itself (below).
  for (const methods of Object.values(asJson.paths)) {
    for (const op of Object.values(methods)) {
      for (const response of Object.values(op.responses)) {
        for (const [name, header] of Object.entries(response.headers ?? {})) if (!requiredHeader(header)) delete response.headers![name];
      }
    }
  }
  // `quick` skips its check of the document itself, which knows only OpenAPI 3.0 (it refuses 3.1's
  // license `identifier`); the schemas it validates responses with are plain JSON Schema either way.
  api = new OpenAPIBackend({ definition: asJson as never, quick: true, validate: true, ajvOpts: { strict: false } });
  await api.init();
});
afterAll(async () => {
  await t.close();
});

function operationOf(operationId: string): { path: string; method: string; responses: Record<string, Resp> } {
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) if (op.operationId === operationId) return { path, method, responses: op.responses };
  }
  throw new Error(`no operation ${operationId}`);
}

/** Records every way the response departs from the document. */
function check(operationId: string, response: LightMyRequestResponse): LightMyRequestResponse {
  const status = response.statusCode;
  seen.push(`${operationId} ${status}`);
  const where = `${operationId} → ${status}`;
  const documented = operationOf(operationId).responses[String(status)];
  if (!documented) {
    mismatches.push(`${where}: status not documented`);
    return response;
  }
  const [mediaType] = Object.keys(documented.content ?? {});
  const sentType = String(response.headers['content-type'] ?? '').split(';')[0];
  if (mediaType && sentType !== mediaType) mismatches.push(`${where}: content-type ${sentType}, documented ${mediaType}`);
  if (mediaType) {
    const body = api.validator.validateResponse(JSON.parse(response.body), operationId, status);
    if (!body.valid) mismatches.push(`${where}: body ${JSON.stringify(body.errors)}`);
  }
  const headers = api.validator.validateResponseHeaders(response.headers, operationId, { statusCode: status, setMatchType: SetMatchType.Superset });
  if (!headers.valid) mismatches.push(`${where}: headers ${JSON.stringify(headers.errors)}`);
  for (const [name, declared] of Object.entries(documented.headers ?? {})) {
    const sent = response.headers[name.toLowerCase()];
    if (requiredHeader(declared) && sent === undefined) mismatches.push(`${where}: declared header ${name} missing`);
    // An optional header, when sent, holds the one value its schema allows.
    const allowed = !('$ref' in declared) && !requiredHeader(declared) ? (declared.schema as { const?: string }).const : undefined;
    if (sent !== undefined && allowed !== undefined && sent !== allowed) mismatches.push(`${where}: header ${name} is ${String(sent)}, documented ${allowed}`);
  }
  return response;
}

describe('every response of real traffic conforms to the served document', () => {
  it('through every operation, its successes and its errors, a ban included', async () => {
    const key = await t.newKey('free');
    const other = await t.newKey('pro');
    const as = (k: string, extra: Record<string, string> = {}) => ({ 'x-api-key': k, ...extra });
    const send = async (operationId: string, options: InjectOptions) => check(operationId, await t.app.inject(options));

    await send('listPets', { url: '/pets?limit=2', headers: as(key) });
    await send('listPets', { url: '/pets?limit=0', headers: as(key) });
    await send('listPets', { url: '/pets' });
    await send('getPet', { url: '/pets/1', headers: as(key) });
    await send('getPet', { url: '/pets/999', headers: as(key) });
    await send('getPet', { url: '/pets/abc', headers: as(key) });
    await send('getPet', { url: '/pets/1', headers: as('pet_unknownunknownunknownunknownunkn') });
    const pending = JSON.parse((await t.app.inject({ url: '/pets?status=pending', headers: as(other) })).body).data[0].id as number;
    const placed = await send('placeOrder', {
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'idempotency-key': 'k1' }),
      payload: { petId: 1, quantity: 2 },
    });
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key, { 'idempotency-key': 'k1' }), payload: { petId: 1, quantity: 2 } });
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key, { 'idempotency-key': 'k1' }), payload: { petId: 2 } });
    // The Structured Field form of the same key: the replay; and retries while the original is in
    // progress (409), whichever of them arrive in time.
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key, { 'idempotency-key': '"k1"' }), payload: { petId: 1, quantity: 2 } });
    await Promise.all(
      [1, 2, 3].map(() =>
        send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key, { 'idempotency-key': 'k-at-once' }), payload: { petId: 1 } }),
      ),
    );
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key), payload: { petId: 999 } });
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key), payload: { petId: pending } });
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key), payload: { quantity: 0 } });
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key, { 'content-type': 'text/plain' }), payload: 'x' });
    await send('placeOrder', { method: 'POST', url: '/store/orders', headers: as(key), payload: { petId: 1, note: 'x'.repeat(20_000) } });
    const orderId = JSON.parse(placed.body).id as number;
    await send('listOrders', { url: '/store/orders', headers: as(key) });
    await send('listOrders', { url: '/store/orders?status=lost', headers: as(key) });
    await send('getOrder', { url: `/store/orders/${orderId}`, headers: as(key) });
    await send('getOrder', { url: `/store/orders/${orderId}`, headers: as(other) });
    await send('getOrder', { url: '/store/orders/0', headers: as(key) });
    await send('cancelOrder', { method: 'DELETE', url: `/store/orders/${orderId}`, headers: as(key) });
    await send('cancelOrder', { method: 'DELETE', url: '/store/orders/424242', headers: as(key) });
    const delivered = JSON.parse((await t.app.inject({ method: 'POST', url: '/store/orders', headers: as(other), payload: { petId: 1 } })).body).id as number;
    await t.db.updateTable('orders').set({ status: 'delivered', complete: 1 }).where('id', '=', delivered).execute();
    await send('cancelOrder', { method: 'DELETE', url: `/store/orders/${delivered}`, headers: as(other) });
    // A test key moves its orders; events record every move.
    const tester = await t.newKey({ plan: 'pro', test: true });
    const moving = JSON.parse((await t.app.inject({ method: 'POST', url: '/store/orders', headers: as(tester), payload: { petId: 1 } })).body).id as number;
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
    const events = await send('listEvents', { url: '/events?type=order.placed&type=order.approved&limit=2', headers: as(tester) });
    await send('listEvents', { url: `/events?orderId=${moving}`, headers: as(tester) });
    await send('listEvents', { url: '/events?type=order.lost', headers: as(tester) });
    const eventId = JSON.parse(events.body).data[0].id as string;
    await send('getEvent', { url: `/events/${eventId}`, headers: as(tester) });
    await send('getEvent', { url: `/events/${eventId}`, headers: as(other) });
    await send('getEvent', { url: '/events/evt_x', headers: as(tester) });
    // Webhook endpoints, their test event and their log.
    const hook = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, extra: Record<string, string> = {}) => ({
      method,
      url,
      headers: as(tester, extra),
      ...(payload ? { payload } : {}),
    });
    const made = await send('createWebhookEndpoint', hook('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks' }, { 'idempotency-key': 'w1' }));
    await send('createWebhookEndpoint', hook('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks' }, { 'idempotency-key': 'w1' }));
    await send('createWebhookEndpoint', hook('POST', '/webhook-endpoints', { url: 'http://127.0.0.1:9/other' }, { 'idempotency-key': 'w1' }));
    await send('createWebhookEndpoint', hook('POST', '/webhook-endpoints', { url: 'ftp://x' }));
    const hookId = JSON.parse(made.body).id as string;
    await send('listWebhookEndpoints', hook('GET', '/webhook-endpoints?limit=1'));
    await send('listWebhookEndpoints', hook('GET', '/webhook-endpoints?cursor=nope'));
    await send('getWebhookEndpoint', hook('GET', `/webhook-endpoints/${hookId}`));
    await send('getWebhookEndpoint', hook('GET', '/webhook-endpoints/we_000000000000000000000000'));
    await send('getWebhookEndpoint', hook('GET', '/webhook-endpoints/nope'));
    await send('updateWebhookEndpoint', hook('PATCH', `/webhook-endpoints/${hookId}`, { description: 'conformance', events: ['order.placed'] }));
    await send('updateWebhookEndpoint', hook('PATCH', `/webhook-endpoints/${hookId}`, {}));
    await send('updateWebhookEndpoint', hook('PATCH', '/webhook-endpoints/we_000000000000000000000000', { enabled: true }));
    await send('rotateWebhookSecret', hook('POST', `/webhook-endpoints/${hookId}/rotate-secret`));
    await send('rotateWebhookSecret', hook('POST', '/webhook-endpoints/we_000000000000000000000000/rotate-secret'));
    const tested = await send('testWebhookEndpoint', hook('POST', `/webhook-endpoints/${hookId}/test`));
    await send('testWebhookEndpoint', hook('POST', '/webhook-endpoints/we_000000000000000000000000/test'));
    await send('listWebhookDeliveries', hook('GET', `/webhook-endpoints/${hookId}/deliveries`));
    await send('listWebhookDeliveries', hook('GET', '/webhook-endpoints/we_000000000000000000000000/deliveries'));
    await send('retryWebhookDelivery', hook('POST', `/webhook-endpoints/${hookId}/deliveries/${JSON.parse(tested.body).id}/retry`));
    await send('retryWebhookDelivery', hook('POST', `/webhook-endpoints/${hookId}/deliveries/dlv_zzz/retry`));
    await send('getEvent', { url: `/events/${JSON.parse(tested.body).eventId}`, headers: as(tester) });
    await send('deleteWebhookEndpoint', hook('DELETE', `/webhook-endpoints/${hookId}`));
    await send('deleteWebhookEndpoint', hook('DELETE', `/webhook-endpoints/${hookId}`));
    // Rate limited, then banned.
    let response: LightMyRequestResponse;
    do response = await send('listPets', { url: '/pets', headers: as(key) });
    while (response.statusCode !== 429);
    for (let i = 0; i < 10; i++) await send('getPet', { url: '/pets/1', headers: as(key) });
    expect(JSON.parse((await send('listOrders', { url: '/store/orders', headers: as(key) })).body).type).toMatch(/key-banned$/);
    // Past the sunset.
    t.clock.set('2099-01-01T00:00:00Z');
    await send('getPet', { url: '/pets/1', headers: as(other) });
    // The store failing.
    await t.db.schema.alterTable('pets').renameTo('pets_gone').execute();
    await send('listPets', { url: '/pets', headers: as(other) });

    for (const status of [200, 201, 202, 204, 400, 401, 403, 404, 409, 410, 413, 415, 422, 429, 500]) {
      expect(
        seen.some((s) => s.endsWith(` ${status}`)),
        `a ${status} was exercised`,
      ).toBe(true);
    }
    expect(mismatches).toEqual([]);
  });
});
