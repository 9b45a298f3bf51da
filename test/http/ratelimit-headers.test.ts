import type { InjectOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
afterEach(async () => t.close());

const HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

function expectRateLimitHeaders(headers: Record<string, unknown>, policy = '"minute";q=60;w=60, "day";q=1000;w=86400') {
  for (const name of HEADERS) expect(headers, name).toHaveProperty(name);
  expect(headers['x-ratelimit-limit']).toMatch(/^\d+$/);
  expect(headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  expect(headers['x-ratelimit-reset']).toMatch(/^\d+$/);
  expect(headers['ratelimit-policy']).toBe(policy);
  expect(headers.ratelimit).toMatch(/^"(minute|day)";r=\d+;t=[1-9]\d*, "(minute|day)";r=\d+;t=[1-9]\d*$/);
}

describe('rate-limit headers on every response of the public listener', () => {
  it('on 200, 201, 400, 401, 404, 405, 409, 410, 413, 415, 422, 429 and 500', async () => {
    t = await testApp({ env: { BODY_LIMIT: '1024' } });
    const key = await t.newKey('free');
    const k = { 'x-api-key': key };
    const seen = new Map<number, Record<string, unknown>>();
    const send = async (options: InjectOptions) => {
      const response = await t.app.inject(options);
      seen.set(response.statusCode, response.headers);
      return response;
    };
    await send({ url: '/pets/1', headers: k });
    await send({
      method: 'POST',
      url: '/store/orders',
      headers: { ...k, 'idempotency-key': 'a' },
      payload: { petId: 1 },
    });
    await send({ url: '/pets/abc', headers: k });
    await send({ url: '/pets/1' });
    await send({ url: '/pets/999', headers: k });
    await send({ method: 'PUT', url: '/pets/1', headers: k });
    const pending = json(await t.app.inject({ url: '/pets?status=pending', headers: k })).data[0].id;
    await send({ method: 'POST', url: '/store/orders', headers: k, payload: { petId: pending } });
    await send({ method: 'POST', url: '/store/orders', headers: k, payload: { petId: 1, name: 'x'.repeat(2000) } });
    await send({
      method: 'POST',
      url: '/store/orders',
      headers: { ...k, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    await send({
      method: 'POST',
      url: '/store/orders',
      headers: { ...k, 'idempotency-key': 'a' },
      payload: { petId: 2 },
    });
    // The sunset and the 500 need their own apps: a clock past the sunset, a broken store.
    const sunset = await testApp({
      env: { PETS_GET_DEPRECATED_AT: '2020-01-01T00:00:00Z', PETS_GET_SUNSET_AT: '2021-01-01T00:00:00Z' },
    });
    const r410 = await sunset.app.inject({ url: '/pets/1', headers: { 'x-api-key': await sunset.newKey('free') } });
    seen.set(r410.statusCode, r410.headers);
    await sunset.close();
    const broken = await testApp();
    const brokenKey = await broken.newKey('free');
    await broken.db.schema.alterTable('pets').renameTo('pets_gone').execute();
    const r500 = await broken.app.inject({ url: '/pets/1', headers: { 'x-api-key': brokenKey } });
    seen.set(r500.statusCode, r500.headers);
    await broken.close();
    while ((await send({ url: '/pets', headers: k })).statusCode !== 429);

    expect([...seen.keys()].sort()).toEqual([200, 201, 400, 401, 404, 405, 409, 410, 413, 415, 422, 429, 500]);
    for (const [status, headers] of seen) {
      expect(headers['x-request-id'], `${status}`).toBeDefined();
      expectRateLimitHeaders(headers);
    }
  });

  it('count down from the plan numbers, with the minute binding until the day has less left', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'enterprise', perMinute: 10, perDay: 12 });
    const get = () => t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    const start = t.clock();
    for (let i = 0; i < 5; i++) await get();
    const fifth = (await t.app.inject({ url: '/openapi.json', headers: { 'x-api-key': key } })).headers;
    expect(fifth['x-ratelimit-limit']).toBe('10');
    expect(fifth['x-ratelimit-remaining']).toBe('5');
    // `t` is the window in effect: the minute until its oldest counted request leaves, the day until midnight.
    expect(fifth.ratelimit).toBe('"minute";r=5;t=60, "day";r=7;t=43200');
    // The minute window is full again when the newest counted request leaves it.
    expect(fifth['x-ratelimit-reset']).toBe(String(Math.ceil((start + 60_000) / 1000)));

    t.clock.advance(60_000);
    const later = (await get()).headers;
    // Minute: 9 left of 10; day: 6 left of 12. The day binds, and resets at the next UTC midnight.
    expect(later['x-ratelimit-limit']).toBe('12');
    expect(later['x-ratelimit-remaining']).toBe('6');
    expect(later['x-ratelimit-reset']).toBe(String(Date.parse('2026-11-22T00:00:00Z') / 1000));
  });

  it('on a tie, describe the day window', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'enterprise', perMinute: 20, perDay: 20 });
    const headers = (await t.app.inject({ url: '/pets', headers: { 'x-api-key': key } })).headers;
    expect(headers['x-ratelimit-remaining']).toBe('19');
    expect(headers['x-ratelimit-reset']).toBe(String(Date.parse('2026-11-22T00:00:00Z') / 1000));
  });

  it('the docs, the document and the problem pages count nothing but carry the headers', async () => {
    t = await testApp();
    const key = await t.newKey('free');
    for (const url of [
      '/openapi.json',
      '/openapi.yaml',
      '/problems/rate-limited',
      '/docs/deprecations',
      '/openapi.json',
    ]) {
      const response = await t.app.inject({ url, headers: { 'x-api-key': key } });
      expect(response.statusCode, url).toBe(200);
      expectRateLimitHeaders(response.headers);
      expect(response.headers['x-ratelimit-remaining']).toBe('60');
    }
    expect((await t.app.inject({ url: '/pets', headers: { 'x-api-key': key } })).headers['x-ratelimit-remaining']).toBe(
      '59',
    );
  });
});

describe('RateLimit t (draft-ietf-httpapi-ratelimit-headers-11)', () => {
  it('is the window in effect while quota remains, never 0; the wait for a slot once none is left; the refusing window first on a 429', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'enterprise', perMinute: 3, perDay: 100 });
    const get = async () => (await t.app.inject({ url: '/pets', headers: { 'x-api-key': key } })).headers.ratelimit;
    // Nothing counted yet: the whole minute; the day runs until midnight (12 h on the test clock).
    expect((await t.app.inject({ url: '/openapi.json', headers: { 'x-api-key': key } })).headers.ratelimit).toBe(
      '"minute";r=3;t=60, "day";r=100;t=43200',
    );
    expect(await get()).toBe('"minute";r=2;t=60, "day";r=99;t=43200');
    t.clock.advance(25_000);
    // The oldest counted request leaves 35 s from now.
    expect(await get()).toBe('"minute";r=1;t=35, "day";r=98;t=43175');
    t.clock.advance(10_000);
    expect(await get()).toBe('"minute";r=0;t=25, "day";r=97;t=43165');
    // Refused by the minute: it comes first, with the wait for its next slot.
    expect(await get()).toBe('"minute";r=0;t=25, "day";r=97;t=43165');
    const dayKey = await t.newKey({ plan: 'enterprise', perMinute: 100, perDay: 1 });
    const getDay = async () =>
      (await t.app.inject({ url: '/pets', headers: { 'x-api-key': dayKey } })).headers.ratelimit;
    expect(await getDay()).toBe('"minute";r=99;t=60, "day";r=0;t=43165');
    // Refused by the day: it comes first.
    expect(await getDay()).toBe('"day";r=0;t=43165, "minute";r=99;t=60');
  });
});
