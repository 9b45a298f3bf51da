import { afterEach, describe, expect, it } from 'vitest';
import { type AdminMethod, adminRequest, ADMIN_TOKEN as TOKEN } from '../helpers/admin.js';
import { type TestApp, testApp } from '../helpers/app.js';

/** The admin API exists only with ADMIN_TOKEN, only on the admin listener, and only for that token. */

let t: TestApp;
afterEach(async () => t.close());

describe('admin API', () => {
  const admin = (method: AdminMethod, url: string, payload?: object, token?: string | null) => adminRequest(t.admin, method, url, payload, token);

  it('does not exist without ADMIN_TOKEN', async () => {
    t = await testApp();
    expect((await admin('GET', '/admin/keys')).statusCode).toBe(404);
  });

  it('refuses a missing or wrong token with a 401 problem', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    for (const token of [null, 'wrong-token-of-some-length', `${TOKEN}x`, '']) {
      const response = await admin('GET', '/admin/keys', undefined, token);
      expect(response.statusCode).toBe(401);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('is not on the public listener at all', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: TOKEN } });
    for (const url of ['/admin/keys', '/admin/keys/x', '/healthz', '/metrics']) {
      const response = await t.app.inject({ url, headers: { authorization: `Bearer ${TOKEN}` } });
      expect(response.statusCode).toBe(404);
    }
  });
});
