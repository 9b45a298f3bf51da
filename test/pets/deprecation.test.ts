import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';

const BASE = 'http://petstore.test';
// The defaults of the configuration (docs/configuration.md).
const DEFAULT_DEPRECATION = `@${Date.parse('2026-01-01T00:00:00Z') / 1000}`;
const DEFAULT_SUNSET = 'Thu, 01 Jul 2027 00:00:00 GMT';

/** The URLs of the `Link` entries with this relation. */
function linksOf(response: LightMyRequestResponse, rel: string): string[] {
  const header = String(response.headers.link ?? '');
  return header
    .split(/,(?=\s*<)/)
    .filter((entry) => new RegExp(`;\\s*rel="?([^";]*\\s)?${rel}(\\s[^";]*)?"?(;|$)`).test(entry))
    .map((entry) => /<([^>]*)>/.exec(entry)?.[1] ?? '');
}

async function expectDeprecationHeaders(
  t: TestApp,
  response: LightMyRequestResponse,
  deprecation: string,
  sunset: string,
) {
  expect(response.headers.deprecation).toBe(deprecation);
  expect(response.headers.sunset).toBe(sunset);
  for (const rel of ['deprecation', 'sunset']) {
    const links = linksOf(response, rel);
    expect(links, `Link rel="${rel}"`).toHaveLength(1);
    const url = new URL(links[0]!);
    expect(`${url.origin}/`).toBe(`${BASE}/`);
    const page = await t.app.inject({ method: 'GET', url: url.pathname + url.search });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
  }
}

describe('GET /pets/{petId} before its sunset', () => {
  let t: TestApp;
  let key: string;
  const get = (url: string, headers: Record<string, string> = { 'x-api-key': key }) =>
    t.app.inject({ method: 'GET', url, headers });

  beforeAll(async () => {
    t = await testApp();
    key = await t.newKey('business');
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['200', '/pets/1', 200],
    ['400', '/pets/abc', 400],
    ['404', '/pets/999999', 404],
  ])('carries Deprecation, Sunset and Link on a %s', async (_name, url, status) => {
    const response = await get(url);
    expect(response.statusCode).toBe(status);
    await expectDeprecationHeaders(t, response, DEFAULT_DEPRECATION, DEFAULT_SUNSET);
  });

  it('carries them on a 401 (no key)', async () => {
    const response = await get('/pets/1', {});
    expect(response.statusCode).toBe(401);
    await expectDeprecationHeaders(t, response, DEFAULT_DEPRECATION, DEFAULT_SUNSET);
  });

  it('does not put them on other operations (GET /pets)', async () => {
    const response = await get('/pets');
    expect(response.statusCode).toBe(200);
    expect(response.headers.deprecation).toBeUndefined();
    expect(response.headers.sunset).toBeUndefined();
    expect(response.headers.link).toBeUndefined();
  });
});

describe('GET /pets/{petId} around its sunset', () => {
  const env = { PETS_GET_DEPRECATED_AT: '2026-03-15T08:30:00Z', PETS_GET_SUNSET_AT: '2026-12-24T18:45:30Z' };
  const deprecation = `@${Date.parse(env.PETS_GET_DEPRECATED_AT) / 1000}`;
  const sunset = 'Thu, 24 Dec 2026 18:45:30 GMT';
  let t: TestApp;
  let key: string;
  const get = (url: string, headers: Record<string, string> = { 'x-api-key': key }) =>
    t.app.inject({ method: 'GET', url, headers });

  beforeAll(async () => {
    t = await testApp({ env });
    key = await t.newKey('business');
  });
  afterAll(async () => {
    await t.close();
  });

  it('still answers 200 one millisecond before the sunset, with the configured headers', async () => {
    t.clock.set('2026-12-24T18:45:29.999Z');
    const response = await get('/pets/1');
    expect(response.statusCode).toBe(200);
    await expectDeprecationHeaders(t, response, deprecation, sunset);
  });

  it('answers 410 problem of type sunset at the sunset instant, with the headers', async () => {
    t.clock.set(env.PETS_GET_SUNSET_AT);
    const response = await get('/pets/1');
    expect(response.statusCode).toBe(410);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(json(response)).toMatchObject({ type: `${BASE}/problems/sunset`, status: 410, instance: '/pets/1' });
    await expectDeprecationHeaders(t, response, deprecation, sunset);
  });

  it.each(['/pets/abc', '/pets/0', '/pets/999999'])('answers 410 after the sunset even for %s', async (url) => {
    t.clock.set('2027-02-01T00:00:00Z');
    const response = await get(url);
    expect(response.statusCode).toBe(410);
    expect(json(response).type).toBe(`${BASE}/problems/sunset`);
    await expectDeprecationHeaders(t, response, deprecation, sunset);
  });

  it('leaves GET /pets answering after the sunset', async () => {
    t.clock.set('2027-02-01T00:00:00Z');
    const response = await get('/pets');
    expect(response.statusCode).toBe(200);
    expect(response.headers.sunset).toBeUndefined();
  });
});

describe('GET /pets/{petId} after the default sunset', () => {
  it('answers 410 from 2027-07-01T00:00:00Z on', async () => {
    const t = await testApp();
    try {
      const key = await t.newKey('business');
      t.clock.set('2027-06-30T23:59:59.999Z');
      expect((await t.app.inject({ method: 'GET', url: '/pets/1', headers: { 'x-api-key': key } })).statusCode).toBe(
        200,
      );
      t.clock.set('2027-07-01T00:00:00.000Z');
      const response = await t.app.inject({ method: 'GET', url: '/pets/1', headers: { 'x-api-key': key } });
      expect(response.statusCode).toBe(410);
      await expectDeprecationHeaders(t, response, DEFAULT_DEPRECATION, DEFAULT_SUNSET);
    } finally {
      await t.close();
    }
  });
});
