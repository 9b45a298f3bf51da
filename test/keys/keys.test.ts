import { afterEach, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
let open: TestApp | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});
const start = async (options?: Parameters<typeof testApp>[0]) => (open = t = await testApp(options));

describe('API keys', () => {
  it('look like pet_ followed by 32 base64url characters (192 bits), each one different', async () => {
    await start();
    const keys = await Promise.all([t.newKey(), t.newKey(), t.newKey()]);
    for (const key of keys) expect(key).toMatch(/^pet_[A-Za-z0-9_-]{32}$/);
    expect(new Set(keys).size).toBe(3);
  });

  it('enterprise keys need their own numbers; other plans refuse them', async () => {
    await start();
    await expect(t.keys.create({ plan: 'enterprise' })).rejects.toThrow(/enterprise key needs/);
    await expect(t.keys.create({ plan: 'free', perMinute: 5, perDay: 10 })).rejects.toThrow(/fixed limits/);
    const { record } = await t.keys.create({ plan: 'enterprise', perMinute: 5, perDay: 50 });
    expect(record).toMatchObject({ plan: 'enterprise', perMinute: 5, perDay: 50 });
  });
});
