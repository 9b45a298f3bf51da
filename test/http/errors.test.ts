import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';

const BASE = 'http://petstore.test';

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await testApp();
  key = await t.newKey('business');
});
afterAll(async () => {
  await t.close();
});

/**
 * The RFC 9457 shape every error has, and the page its `type` points at. Returns the body.
 */
async function expectProblem(
  app: TestApp,
  response: LightMyRequestResponse,
  status: number,
  slug: string,
  instance: string,
) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/);
  const body = json(response);
  expect(body.type).toBe(`${BASE}/problems/${slug}`);
  expect(typeof body.title).toBe('string');
  expect(body.title.length).toBeGreaterThan(0);
  expect(body.status).toBe(status);
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
  expect(body.instance).toBe(instance);

  const page = await app.app.inject({ method: 'GET', url: new URL(body.type as string).pathname });
  expect(page.statusCode).toBe(200);
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  return body;
}

const withKey = (headers: Record<string, string> = {}) => ({ 'x-api-key': key, ...headers });

describe('unknown paths', () => {
  it.each(['/nothing', '/pets/1/toys', '/store', '/store/orders/1/items'])(
    'answers 404 not-found for %s',
    async (url) => {
      const response = await t.app.inject({ method: 'GET', url, headers: withKey() });
      await expectProblem(t, response, 404, 'not-found', url);
    },
  );

  it('answers 404 without a key too, and keeps the query out of instance', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/nothing?x=1' });
    await expectProblem(t, response, 404, 'not-found', '/nothing');
  });
});

describe('malformed URLs', () => {
  it.each(['/pets/%zz', '/pets/%E0%A4%A'])(
    'answers %s (bad percent-encoding) with a 400 problem and a request id',
    async (url) => {
      const response = await t.app.inject({ method: 'GET', url, headers: withKey({ 'x-request-id': 'bad-url-1' }) });
      await expectProblem(t, response, 400, 'invalid-request', url);
      expect(response.headers['x-request-id']).toBe('bad-url-1');
    },
  );
});

describe('long path parameters', () => {
  it.each([
    ['/pets/', 'petId'],
    ['/store/orders/', 'orderId'],
  ])('answers %s followed by 101 digits with a 400 naming %s', async (prefix, name) => {
    const url = `${prefix}${'1'.repeat(101)}`;
    const body = await expectProblem(t, await t.app.inject({ url, headers: withKey() }), 400, 'invalid-request', url);
    expect(body.errors).toEqual([expect.objectContaining({ in: 'path', name })]);
  });
});

describe('wrong methods', () => {
  it.each([
    ['PUT', '/pets/1', ['GET', 'HEAD']],
    ['DELETE', '/pets', ['GET', 'HEAD']],
    ['POST', '/pets', ['GET', 'HEAD']],
    ['PATCH', '/store/orders', ['GET', 'HEAD', 'POST']],
    ['PUT', '/store/orders/1', ['GET', 'HEAD', 'DELETE']],
    // Methods beyond Fastify's own: Node lets them through, so they get their 405 as well.
    ['TRACE', '/pets/1', ['GET', 'HEAD']],
    ['PROPFIND', '/pets', ['GET', 'HEAD']],
    ['SEARCH', '/store/orders', ['GET', 'HEAD', 'POST']],
    ['QUERY', '/store/orders/1', ['GET', 'HEAD', 'DELETE']],
    ['PURGE', '/openapi.json', ['GET', 'HEAD']],
  ] as const)('answers %s %s with 405 and Allow listing exactly the allowed methods', async (method, url, allowed) => {
    const response = await t.app.inject({ method, url, headers: withKey() });
    await expectProblem(t, response, 405, 'method-not-allowed', url);
    const allow = String(response.headers.allow ?? '')
      .split(/\s*,\s*/)
      .filter(Boolean);
    expect(new Set(allow)).toEqual(new Set(allowed));
    expect(allow).toHaveLength(allowed.length);
  });
});

describe('precedence: the path and the method are judged before the body', () => {
  it.each([
    ['PUT', '/pets/1', 'application/xml', '<pet/>', ['GET', 'HEAD']],
    ['POST', '/pets', 'text/plain', 'hello', ['GET', 'HEAD']],
    ['PATCH', '/store/orders', 'application/json', '{"status": ', ['GET', 'HEAD', 'POST']],
  ] as const)(
    'answers %s %s with a %s body it cannot parse: 405, not 400/415',
    async (method, url, type, payload, allowed) => {
      const response = await t.app.inject({ method, url, headers: withKey({ 'content-type': type }), payload });
      await expectProblem(t, response, 405, 'method-not-allowed', url);
      expect(new Set(String(response.headers.allow).split(/\s*,\s*/))).toEqual(new Set(allowed));
    },
  );

  it('answers an unknown path with a malformed JSON body: 404, not 400', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/nothing',
      headers: withKey({ 'content-type': 'application/json' }),
      payload: '{bad',
    });
    await expectProblem(t, response, 404, 'not-found', '/nothing');
  });
});

describe('request bodies', () => {
  const post = (payload: string, contentType = 'application/json') =>
    t.app.inject({ method: 'POST', url: '/store/orders', headers: withKey({ 'content-type': contentType }), payload });

  it('answers a compressed body with 415, not as broken JSON; the path and the method are still judged first', async () => {
    const gzip = (method: 'POST' | 'PUT', url: string) =>
      t.app.inject({
        method,
        url,
        headers: withKey({ 'content-type': 'application/json', 'content-encoding': 'gzip' }),
        payload: Buffer.from([0x1f, 0x8b, 8, 0, 0, 0]),
      });
    const body = await expectProblem(
      t,
      await gzip('POST', '/store/orders'),
      415,
      'unsupported-media-type',
      '/store/orders',
    );
    expect(body.detail).toContain('gzip');
    await expectProblem(t, await gzip('PUT', '/pets/1'), 405, 'method-not-allowed', '/pets/1');
    // Declared but with no body to decode: nothing to refuse.
    const empty = await t.app.inject({
      method: 'GET',
      url: '/pets/1',
      headers: withKey({ 'content-encoding': 'gzip' }),
    });
    expect(empty.statusCode).toBe(200);
  });

  it('answers malformed JSON with 400 invalid-request', async () => {
    const body = await expectProblem(t, await post('{"petId": 1,'), 400, 'invalid-request', '/store/orders');
    expect(body.errors).toEqual([expect.objectContaining({ in: 'body' })]);
  });

  it('answers a body over the limit (20 KiB of valid JSON) with 413', async () => {
    const payload = JSON.stringify({ petId: 1, quantity: 1, padding: 'x'.repeat(20 * 1024) });
    await expectProblem(t, await post(payload), 413, 'payload-too-large', '/store/orders');
  });

  it('answers a body over a configured BODY_LIMIT with 413, and accepts one under it', async () => {
    const small = await testApp({ env: { BODY_LIMIT: '100' } });
    try {
      const smallKey = await small.newKey('business');
      const send = (payload: string) =>
        small.app.inject({
          method: 'POST',
          url: '/store/orders',
          headers: { 'x-api-key': smallKey, 'content-type': 'application/json' },
          payload,
        });
      await expectProblem(
        small,
        await send(JSON.stringify({ petId: 1, quantity: 1, shipDate: `2026-12-01T10:00:00${'.0'.padEnd(90, '0')}Z` })),
        413,
        'payload-too-large',
        '/store/orders',
      );
      expect((await send(JSON.stringify({ petId: 1, quantity: 1 }))).statusCode).toBe(201);
    } finally {
      await small.close();
    }
  });

  it.each(['text/plain', 'application/xml', 'application/x-www-form-urlencoded'])(
    'answers Content-Type %s with 415',
    async (type) => {
      const payload = type === 'application/xml' ? '<order><petId>1</petId></order>' : 'petId=1&quantity=1';
      await expectProblem(t, await post(payload, type), 415, 'unsupported-media-type', '/store/orders');
    },
  );
});

describe('X-Request-Id', () => {
  const sane = 'req-2026.11.21:abc_DEF-123';

  it.each([
    ['200', 'GET', '/pets'],
    ['404', 'GET', '/nothing'],
    ['405', 'PUT', '/pets/1'],
  ] as const)('echoes a sane id on a %s', async (_status, method, url) => {
    const response = await t.app.inject({ method, url, headers: withKey({ 'x-request-id': sane }) });
    expect(response.headers['x-request-id']).toBe(sane);
  });

  it('echoes a sane id on a 401', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/pets', headers: { 'x-request-id': sane } });
    expect(response.statusCode).toBe(401);
    expect(response.headers['x-request-id']).toBe(sane);
  });

  it('gives a new id when none is sent, a different one each time', async () => {
    const one = await t.app.inject({ method: 'GET', url: '/pets', headers: withKey() });
    const two = await t.app.inject({ method: 'GET', url: '/pets', headers: withKey() });
    expect(one.headers['x-request-id']).toMatch(/^\S{8,}$/);
    expect(two.headers['x-request-id']).toMatch(/^\S{8,}$/);
    expect(one.headers['x-request-id']).not.toBe(two.headers['x-request-id']);
  });

  it.each([
    ['300 characters', 'a'.repeat(300)],
    ['spaces', 'two words'],
    ['angle brackets', '<script>'],
  ])('replaces an insane id (%s) with a new one', async (_name, insane) => {
    const response = await t.app.inject({ method: 'GET', url: '/pets', headers: withKey({ 'x-request-id': insane }) });
    const id = response.headers['x-request-id'];
    expect(typeof id).toBe('string');
    expect(id).not.toBe(insane);
    expect(id).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
  });
});

describe('401', () => {
  it.each([
    ['no key', {}],
    ['a malformed key', { 'x-api-key': 'nope' }],
    ['an unknown key', { 'x-api-key': `pet_${'A'.repeat(43)}` }],
  ])('answers %s with 401 unauthorized', async (_name, headers) => {
    await expectProblem(t, await t.app.inject({ method: 'GET', url: '/pets', headers }), 401, 'unauthorized', '/pets');
  });
});

describe('500', () => {
  it('reveals no stack, SQL or path when the store fails', async () => {
    const broken = await testApp();
    try {
      const brokenKey = await broken.newKey('business');
      await broken.db.schema.alterTable('pets').renameTo('pets_gone').execute();
      const response = await broken.app.inject({ method: 'GET', url: '/pets/1', headers: { 'x-api-key': brokenKey } });
      await expectProblem(broken, response, 500, 'internal-error', '/pets/1');
      for (const leak of ['at ', '.ts', 'sqlite', 'SQLITE', 'SELECT', 'select', 'no such table', '/work', 'pets"']) {
        expect(response.body, `the body mentions ${JSON.stringify(leak)}`).not.toContain(leak);
      }
      expect(response.headers['x-request-id']).toEqual(expect.any(String));
    } finally {
      await broken.close();
    }
  });
});
