import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { tempDir } from '../helpers/process.js';

/**
 * A key is stored only as its digest, and a missing, malformed, unknown
 * or revoked one is a 401 that does not echo it; over a real socket.
 */

describe('over a real socket', () => {
  let t: TestApp;
  let open: TestApp | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });
  const start = async (options?: Parameters<typeof testApp>[0]) =>
    (open = t = await testApp({ ...options, overSocket: true }));

  const get = (key?: string) =>
    t.request({ method: 'GET', url: '/pets', headers: key === undefined ? {} : { 'x-api-key': key } });

  describe('API keys', () => {
    it('are stored only as SHA-256: the database files never contain the key', async () => {
      const dir = tempDir();
      await start({ sqliteFile: join(dir, 'petstore.db') });
      const { record, key } = await t.keys.create({ plan: 'pro', name: 'scan me' });
      expect((await get(key)).statusCode).toBe(200);
      await t.close();
      open = undefined;
      const files = readdirSync(dir).map((f) => readFileSync(join(dir, f)));
      // The scan does see the stored records: the key's public id is there.
      expect(files.some((bytes) => bytes.includes(record.id))).toBe(true);
      const secret = key.slice('pet_'.length);
      for (const bytes of files) expect(bytes.includes(secret)).toBe(false);
    });

    it.each([
      ['missing', undefined, /X-API-Key/],
      ['empty', '', /X-API-Key/],
      ['malformed', 'not-a-key', /form pet_/],
      ['too short', 'pet_abc', /form pet_/],
      ['unknown', `pet_${'A'.repeat(32)}`, /not known/],
    ])('a %s key gets a 401 problem', async (_case, key, detail) => {
      await start();
      const response = await get(key);
      expect(response.statusCode).toBe(401);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      const body = json(response);
      expect(body).toMatchObject({ type: 'http://petstore.test/problems/unauthorized', status: 401 });
      expect(body.detail).toMatch(detail);
      if (key) expect(response.body).not.toContain(key);
    });

    it('a revoked key is refused from its very next request', async () => {
      await start();
      const { record, key } = await t.keys.create({ plan: 'free' });
      expect((await get(key)).statusCode).toBe(200);
      await t.keys.revoke(record.id);
      const response = await get(key);
      expect(response.statusCode).toBe(401);
      expect(json(response).detail).toMatch(/revoked/);
    });
  });
});
