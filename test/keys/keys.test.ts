import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { json, testApp, type TestApp } from '../helpers/app.js';
import { tempDir } from '../helpers/process.js';

let t: TestApp;
let open: TestApp | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});
const start = async (options?: Parameters<typeof testApp>[0]) => (open = t = await testApp(options));

const get = (key?: string) => t.app.inject({ method: 'GET', url: '/pets', headers: key === undefined ? {} : { 'x-api-key': key } });

describe('API keys', () => {
  it('look like pet_ followed by 32 base64url characters (192 bits), each one different', async () => {
    await start();
    const keys = await Promise.all([t.newKey(), t.newKey(), t.newKey()]);
    for (const key of keys) expect(key).toMatch(/^pet_[A-Za-z0-9_-]{32}$/);
    expect(new Set(keys).size).toBe(3);
  });

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

  it('enterprise keys need their own numbers; other plans refuse them', async () => {
    await start();
    await expect(t.keys.create({ plan: 'enterprise' })).rejects.toThrow(/enterprise key needs/);
    await expect(t.keys.create({ plan: 'free', perMinute: 5, perDay: 10 })).rejects.toThrow(/fixed limits/);
    const { record } = await t.keys.create({ plan: 'enterprise', perMinute: 5, perDay: 50 });
    expect(record).toMatchObject({ plan: 'enterprise', perMinute: 5, perDay: 50 });
  });
});
