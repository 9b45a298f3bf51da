import { afterEach, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
afterEach(async () => t.close());

const get = (url: string, key: string | undefined, ifNoneMatch?: string) =>
  t.app.inject({
    url,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(ifNoneMatch !== undefined ? { 'if-none-match': ifNoneMatch } : {}),
    },
  });
const remaining = (response: { headers: Record<string, unknown> }) => Number(response.headers['x-ratelimit-remaining']);

describe('conditional reads: ETag and If-None-Match', () => {
  it.each(['/pets/1', '/pets?limit=3', '/store/orders', '/store/orders/1'])(
    '%s: a 200 carries an ETag; sending it back gets a 304 with the headers that counts nothing',
    async (url) => {
      t = await testApp();
      const key = await t.newKey('free');
      expect(
        (
          await t.app.inject({
            method: 'POST',
            url: '/store/orders',
            headers: { 'x-api-key': key },
            payload: { petId: 1, quantity: 1 },
          })
        ).statusCode,
      ).toBe(201);
      const first = await get(url, key);
      expect(first.statusCode).toBe(200);
      const etag = first.headers.etag as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect((await get(url, key)).headers.etag).toBe(etag);
      const before = remaining(await get(url, key));
      for (let i = 0; i < 5; i++) {
        const notModified = await get(url, key, etag);
        expect(notModified.statusCode).toBe(304);
        expect(notModified.body).toBe('');
        expect(notModified.headers.etag).toBe(etag);
        expect(notModified.headers['x-ratelimit-limit']).toBe('60');
        expect(remaining(notModified)).toBe(before);
      }
      // A tag that is not current: the full answer, counted.
      const changed = await get(url, key, '"something-else"');
      expect(changed.statusCode).toBe(200);
      expect(remaining(changed)).toBe(before - 1);
    },
  );

  it('compares weakly, takes a list, and * matches whatever is current', async () => {
    t = await testApp();
    const key = await t.newKey('pro');
    const etag = (await get('/pets/2', key)).headers.etag as string;
    for (const sent of [`W/${etag}`, `"a", ${etag}`, '*'])
      expect((await get('/pets/2', key, sent)).statusCode, sent).toBe(304);
    expect((await get('/pets/2', key, '"a", "b"')).statusCode).toBe(200);
  });

  it('a change makes the old tag stale: the list of orders after a new order', async () => {
    t = await testApp();
    const key = await t.newKey('pro');
    const etag = (await get('/store/orders', key)).headers.etag as string;
    await t.app.inject({
      method: 'POST',
      url: '/store/orders',
      headers: { 'x-api-key': key },
      payload: { petId: 1, quantity: 1 },
    });
    const after = await get('/store/orders', key, etag);
    expect(after.statusCode).toBe(200);
    expect(after.headers.etag).not.toBe(etag);
    expect(json(after).data).toHaveLength(1);
  });

  it('a 304 is free even with nothing left in the minute; a stale tag then gets the 429', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'enterprise', perMinute: 2, perDay: 100 });
    const etag = (await get('/pets/1', key)).headers.etag as string;
    await get('/pets/1', key);
    for (let i = 0; i < 3; i++) expect((await get('/pets/1', key, etag)).statusCode).toBe(304);
    const refused = await get('/pets/1', key, '"stale"');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.headers.etag).toBeUndefined();
    expect(json(refused)).toMatchObject({ status: 429, window: 'minute' });
  });

  it('a banned key is refused, conditional or not', async () => {
    t = await testApp({ env: { BAN_AFTER_REJECTIONS: '2' } });
    const key = await t.newKey({ plan: 'enterprise', perMinute: 1, perDay: 100 });
    const etag = (await get('/pets/1', key)).headers.etag as string;
    for (let i = 0; i < 3; i++) await get('/pets/1', key);
    const banned = await get('/pets/1', key, etag);
    expect(banned.statusCode).toBe(429);
    expect(json(banned).type).toMatch(/key-banned$/);
  });

  it('a conditional read answered otherwise than 200 or 304 (a 404, a 400) counts, as any request', async () => {
    t = await testApp();
    const key = await t.newKey('pro');
    const before = remaining(await get('/pets/1', key));
    expect((await get('/pets/999', key, '*')).statusCode).toBe(404);
    expect((await get('/pets?limit=0', key, '*')).statusCode).toBe(400);
    expect(remaining(await get('/pets/1', key))).toBe(before - 3);
  });

  it('without a valid key a conditional read is a 401 that counts, as any other', async () => {
    t = await testApp();
    const first = await get('/pets/1', undefined, '*');
    const second = await get('/pets/1', undefined, '*');
    expect([first.statusCode, second.statusCode]).toEqual([401, 401]);
    expect(remaining(second)).toBe(remaining(first) - 1);
  });

  it('an If-None-Match too long to be a list of tags is a 400 problem', async () => {
    t = await testApp();
    const key = await t.newKey('pro');
    const response = await get('/pets/1', key, `"${'a'.repeat(2_000)}"`);
    expect(response.statusCode).toBe(400);
    expect(json(response).errors).toEqual([expect.objectContaining({ in: 'header', name: 'if-none-match' })]);
  });
});
