import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

describe('CORS', () => {
  it('every response allows any origin and exposes all its headers', async () => {
    const key = await t.newKey('free');
    for (const response of [
      await t.app.inject({ url: '/pets', headers: { 'x-api-key': key } }),
      await t.app.inject({ url: '/nowhere' }),
    ]) {
      expect(response.headers['access-control-allow-origin']).toBe('*');
      // What a browser makes of it, from a page of another origin: test/e2e/cors-browser.test.ts.
      expect(response.headers['access-control-expose-headers']).toBe('*');
    }
  });

  it('a preflight gets 204 with the methods and headers a client may send, and the rate-limit headers', async () => {
    const response = await t.app.inject({
      method: 'OPTIONS',
      url: '/store/orders',
      headers: {
        origin: 'https://notebook.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key, content-type, idempotency-key',
      },
    });
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
    expect(response.headers['access-control-allow-headers']).toBe(
      'X-API-Key, Authorization, Content-Type, Idempotency-Key, X-Request-Id, Prefer, If-None-Match, Petstore-Version',
    );
    expect(response.headers['x-ratelimit-limit']).toBe('60');
  });

  it('a plain OPTIONS (not a preflight) is still a 405 with Allow', async () => {
    const response = await t.app.inject({ method: 'OPTIONS', url: '/store/orders' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
  });
});
