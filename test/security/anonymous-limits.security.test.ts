import { afterEach, describe, expect, it } from 'vitest';
import { UNCOUNTED_POLICY } from '../../src/ratelimit/plans.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

/**
 * Without a valid key a client is limited by its address: guessing
 * keys costs like any request, on every path; over a real socket.
 */

describe('over a real socket', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  describe('requests without a valid key', () => {
    it('are limited per client address under the anonymous policy, 401s included, bans included', async () => {
      t = await testApp({ overSocket: true });
      const anonymous = (remoteAddress: string, headers: Record<string, string> = {}) =>
        t.request({ url: '/pets', remoteAddress, headers });
      for (let i = 0; i < 60; i++) {
        const response = await anonymous('203.0.113.7', { 'x-api-key': `pet_${String(i).padStart(32, 'x')}` });
        expect(response.statusCode).toBe(401);
        expect(response.headers['x-ratelimit-limit']).toBe('60');
      }
      const refused = await anonymous('203.0.113.7');
      expect(refused.statusCode).toBe(429);
      expect(json(refused)).toMatchObject({ plan: 'anonymous', window: 'minute', limit: 60 });
      expect((await anonymous('203.0.113.8')).statusCode).toBe(401);
      for (let i = 0; i < 10; i++) await anonymous('203.0.113.7');
      expect(json(await anonymous('203.0.113.7')).type).toMatch(/key-banned$/);
    });

    it('a bad key counts against the address on the uncounted paths too: no path tests keys for free', async () => {
      t = await testApp({ overSocket: true });
      const guess = (i: number, url: string) =>
        t.request({
          url,
          remoteAddress: '203.0.113.9',
          headers: { 'x-api-key': `pet_${String(i).padStart(32, 'g')}` },
        });
      const urls = ['/openapi.json', '/openapi.yaml', '/docs', '/problems/not-found'];
      for (let i = 0; i < 60; i++) {
        const response = await guess(i, urls[i % urls.length]!);
        expect(response.statusCode).toBe(200);
        expect(response.headers['x-ratelimit-limit']).toBe('60');
        expect(response.headers['x-ratelimit-remaining']).toBe(String(59 - i));
      }
      expect((await guess(60, '/openapi.json')).statusCode).toBe(429);
      expect((await t.request({ url: '/pets', remoteAddress: '203.0.113.9' })).statusCode).toBe(429);
    });

    it('the uncounted paths are throttled per key by a policy of their own, which spends nothing of the plan', async () => {
      t = await testApp({ overSocket: true });
      const key = await t.newKey('pro');
      const docs = (remoteAddress: string, url = '/openapi.json') =>
        t.request({ url, remoteAddress, headers: { 'x-api-key': key } });
      for (let i = 0; i < UNCOUNTED_POLICY.perMinute; i++) {
        const response = await docs('203.0.113.10', i % 2 ? '/docs' : '/openapi.json');
        expect(response.statusCode).toBe(200);
        // The key's own headers: nothing of its plan is spent.
        expect(response.headers['x-ratelimit-remaining']).toBe('300');
      }
      const refused = await docs('203.0.113.10');
      expect(refused.statusCode).toBe(429);
      expect(json(refused)).toMatchObject({
        code: 'uncounted-throttled',
        policy: 'uncounted',
        window: 'minute',
        limit: UNCOUNTED_POLICY.perMinute,
      });
      // The key's throttle, wherever it comes from; another address without it reads the docs; the key
      // still has its whole minute for the API.
      expect((await docs('203.0.113.11')).statusCode).toBe(429);
      expect((await t.request({ url: '/openapi.json', remoteAddress: '203.0.113.11' })).statusCode).toBe(200);
      const api = await t.request({ url: '/pets', remoteAddress: '203.0.113.10', headers: { 'x-api-key': key } });
      expect(api.statusCode).toBe(200);
      expect(api.headers['x-ratelimit-remaining']).toBe('299');
    });

    it('cannot escape the limit with a forged X-Forwarded-For', async () => {
      t = await testApp({ overSocket: true });
      for (let i = 0; i < 60; i++)
        await t.request({
          url: '/pets',
          remoteAddress: '203.0.113.7',
          headers: { 'x-forwarded-for': `198.51.100.${i}` },
        });
      const forged = await t.request({
        url: '/pets',
        remoteAddress: '203.0.113.7',
        headers: { 'x-forwarded-for': '198.51.100.250' },
      });
      expect(forged.statusCode).toBe(429);
    });

    it('are counted by X-Forwarded-For only behind a trusted proxy (TRUST_PROXY)', async () => {
      t = await testApp({ env: { TRUST_PROXY: '127.0.0.1' }, overSocket: true });
      for (let i = 0; i < 60; i++)
        await t.request({ url: '/pets', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '198.51.100.1' } });
      const sameClient = await t.request({
        url: '/pets',
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': '198.51.100.1' },
      });
      expect(sameClient.statusCode).toBe(429);
      const otherClient = await t.request({
        url: '/pets',
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': '198.51.100.2' },
      });
      expect(otherClient.statusCode).toBe(401);
    });
  });
});
