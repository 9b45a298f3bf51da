/**
 * The report card's token checks (docs/testing-clients.md#is-my-client-a-good-api-citizen): `reuses-tokens` and
 * `renews-expired-tokens`, each shown failing and passing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
afterEach(async () => t?.close());

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

async function client() {
  const created = await t.keys.create({ plan: 'pro', test: true });
  const basic = `Basic ${Buffer.from(`${created.record.id}:${created.key}`).toString('base64')}`;
  const fetchToken = async (): Promise<{ access_token: string; expires_in: number }> =>
    json(
      await t.request({
        method: 'POST',
        url: '/oauth/token',
        headers: { ...FORM, authorization: basic },
        payload: 'grant_type=client_credentials',
      }),
    );
  const call = (token: string) =>
    t.request({ url: '/pets/1', headers: { authorization: `Bearer ${token}`, 'petstore-version': NEWEST_VERSION } });
  const check = async (id: string) =>
    json(await t.request({ url: '/report-card', headers: { 'x-api-key': created.key } })).checks.find(
      (entry: { id: string }) => entry.id === id,
    );
  const advance = (seconds: number) =>
    t.request({
      method: 'POST',
      url: '/test-clock/advance',
      headers: { 'x-api-key': created.key },
      payload: { seconds },
    });
  return { fetchToken, call, check, advance };
}

describe('reuses-tokens', () => {
  it('is untested until a token is issued, then fails for eight parallel callers that each fetch one', async () => {
    t = await testApp();
    const c = await client();
    expect(await c.check('reuses-tokens')).toMatchObject({ status: 'untested', seen: 0 });
    const tokens = await Promise.all(Array.from({ length: 8 }, () => c.fetchToken()));
    await Promise.all(tokens.map(({ access_token }) => c.call(access_token)));
    const check = await c.check('reuses-tokens');
    expect(check).toMatchObject({ status: 'failed', seen: 8, failed: 7 });
    expect(check.failures[0].detail).toMatch(/^asked for another token while holding one with 3600 s left$/);
  });

  it('passes for callers that share one token and renew it once, behind one promise, shortly before it expires', async () => {
    t = await testApp();
    const c = await client();
    let held: Promise<{ access_token: string; expires_in: number }> | undefined;
    const shared = () => (held ??= c.fetchToken());
    for (const { access_token } of await Promise.all(Array.from({ length: 8 }, shared))) await c.call(access_token);
    // 30 s before it expires, in the key's time: one renewal for all eight.
    await c.advance(3570);
    held = undefined;
    for (const { access_token } of await Promise.all(Array.from({ length: 8 }, shared))) await c.call(access_token);
    expect(await c.check('reuses-tokens')).toMatchObject({ status: 'passed', seen: 2, failed: 0 });
    // The card grades a token request for this check only: OAuth libraries send no Petstore-Version.
    expect(await c.check('pins-version')).toMatchObject({ failed: 0 });
  });
});

describe('renews-expired-tokens', () => {
  it('fails when the key sends a token again after a 401 invalid_token for its expiry', async () => {
    t = await testApp();
    const c = await client();
    const { access_token } = await c.fetchToken();
    await c.advance(3600);
    expect((await c.call(access_token)).statusCode).toBe(401);
    expect(await c.check('renews-expired-tokens')).toMatchObject({ status: 'passed', seen: 1 });
    expect((await c.call(access_token)).statusCode).toBe(401);
    const check = await c.check('renews-expired-tokens');
    expect(check).toMatchObject({ status: 'failed', seen: 1, failed: 1 });
    expect(check.failures[0].detail).toMatch(/^sent again an access token refused as expired 0 s before$/);
  });

  it('passes when the key gets a new token once and sends that instead', async () => {
    t = await testApp();
    const c = await client();
    const first = await c.fetchToken();
    await c.advance(3600);
    expect((await c.call(first.access_token)).statusCode).toBe(401);
    const second = await c.fetchToken();
    expect((await c.call(second.access_token)).statusCode).toBe(200);
    expect(await c.check('renews-expired-tokens')).toMatchObject({ status: 'passed', seen: 1, failed: 0 });
    expect(await c.check('reuses-tokens')).toMatchObject({ status: 'passed', seen: 2, failed: 0 });
  });
});
