import { afterEach, describe, expect, it } from 'vitest';
import { type AdminMethod, adminOverSocket, ADMIN_TOKEN as TOKEN } from '../helpers/admin.js';
import { type TestApp, testApp } from '../helpers/app.js';
import type { Received, Sent } from '../helpers/over-socket.js';

/**
 * The admin API exists only with ADMIN_TOKEN, only on the admin listener, and only for that token: over a real socket.
 */

describe('over a real socket', () => {
  let t: TestApp;
  let adminAt: (sent: Sent) => Promise<Received>;
  const start = async (env?: Record<string, string>) => {
    t = await testApp({ env, overSocket: true });
    adminAt = await adminOverSocket(t.admin);
  };
  afterEach(async () => t.close());

  describe('admin API', () => {
    const admin = (method: AdminMethod, url: string, payload?: object, token: string | null = TOKEN) =>
      adminAt({ method, url, payload, headers: token === null ? {} : { authorization: `Bearer ${token}` } });

    it('does not exist without ADMIN_TOKEN', async () => {
      await start();
      expect((await admin('GET', '/admin/keys')).statusCode).toBe(404);
    });

    it('refuses a missing or wrong token with a 401 problem', async () => {
      await start({ ADMIN_TOKEN: TOKEN });
      for (const token of [null, 'wrong-token-of-some-length', `${TOKEN}x`, '']) {
        const response = await admin('GET', '/admin/keys', undefined, token);
        expect(response.statusCode).toBe(401);
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
    });

    it('is not on the public listener at all', async () => {
      await start({ ADMIN_TOKEN: TOKEN });
      for (const url of ['/admin/keys', '/admin/keys/x', '/healthz', '/metrics']) {
        const response = await t.request({ url, headers: { authorization: `Bearer ${TOKEN}` } });
        expect(response.statusCode).toBe(404);
      }
    });
  });
});
