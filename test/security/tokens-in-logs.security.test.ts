import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import type { Received } from '../helpers/over-socket.js';

/**
 * No access token, client secret or signing key reaches a log line, an error body or a metric, through every path
 * of the token endpoint and of Bearer requests (docs/tokens.md); over a real socket.
 */
describe('tokens, client secrets and signing keys never leave the service', () => {
  const logged: string[] = [];
  const bodies: string[] = [];
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ logLines: logged, overSocket: true });
  });
  afterAll(async () => t.close());

  /** A refusal's body and headers, kept to be searched (a token's own answer holds the token, of course). */
  const kept = (answer: Received) => {
    if (answer.statusCode >= 400) bodies.push(answer.body, JSON.stringify(answer.headers));
    return answer;
  };
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  const tokenBy = async (headers: Record<string, string>, payload: string) =>
    kept(await t.request({ method: 'POST', url: '/oauth/token', headers: { ...FORM, ...headers }, payload }));
  const bearer = async (token: string, url = '/pets/1', method = 'GET') =>
    kept(
      await t.request({
        method,
        url,
        headers: { authorization: `Bearer ${token}`, 'petstore-version': NEWEST_VERSION },
        ...(method === 'POST' ? { payload: { petId: 1, quantity: 1 } } : {}),
      }),
    );

  it('through every path of the grant and of Bearer requests', async () => {
    const live = await t.keys.create({ plan: 'pro' });
    const test = await t.keys.create({ plan: 'pro', test: true });
    const other = await t.keys.create({ plan: 'pro' });
    const secrets = [live.key, test.key, other.key];
    const grant = 'grant_type=client_credentials';
    const tokens: string[] = [];
    // Issued, by HTTP Basic and in the form; with a scope.
    for (const { record, key } of [live, test]) {
      tokens.push(json(await tokenBy({ authorization: basic(record.id, key) }, grant)).access_token);
      const post = `${grant}&client_id=${record.id}&client_secret=${encodeURIComponent(key)}&scope=pets:read`;
      tokens.push(json(await tokenBy({}, post)).access_token);
    }
    // Refused: another key's secret, by Basic and in the form; both ways at once; a bad grant, a bad scope; JSON.
    await tokenBy({ authorization: basic(live.record.id, other.key) }, grant);
    await tokenBy({}, `${grant}&client_id=${live.record.id}&client_secret=${encodeURIComponent(other.key)}`);
    await tokenBy({ authorization: basic(live.record.id, live.key) }, `${grant}&client_secret=${live.key}`);
    await tokenBy({ authorization: basic(live.record.id, live.key) }, 'grant_type=password');
    await tokenBy({ authorization: basic(live.record.id, live.key) }, `${grant}&scope=everything`);
    kept(
      await t.request({
        method: 'POST',
        url: '/oauth/token',
        headers: { authorization: basic(live.record.id, live.key) },
        payload: { grant_type: 'client_credentials', client_secret: live.key },
      }),
    );
    // Used: answered, out of scope, changed, with a key too, expired by the test clock, of a revoked key.
    for (const token of tokens) {
      await bearer(token);
      await bearer(token, '/store/orders', 'POST');
      await bearer(`${token.slice(0, -4)}AAAA`);
      kept(
        await t.request({
          url: '/pets/1',
          headers: { authorization: `Bearer ${token}`, 'x-api-key': secrets[0]! },
        }),
      );
    }
    kept(
      await t.request({
        method: 'POST',
        url: '/test-clock/advance',
        headers: { 'x-api-key': test.key },
        payload: { seconds: 3600 },
      }),
    );
    await bearer(tokens[2]!);
    await t.keys.revoke(live.record.id);
    await bearer(tokens[0]!);
    kept(await t.request({ url: '/.well-known/jwks.json' }));
    kept(await t.request({ url: '/.well-known/oauth-authorization-server' }));

    const privateKeys = await t.db.selectFrom('oauth_signing_keys').select('private_jwk').execute();
    const privateParts = privateKeys.map((row) => (JSON.parse(row.private_jwk) as { d: string }).d);
    expect(privateParts.length).toBeGreaterThan(0);
    const metrics = (await t.admin.inject({ url: '/metrics' })).body;
    expect(logged.length).toBeGreaterThan(20);
    expect(bodies.length).toBeGreaterThan(20);
    const places = { log: logged.join('\n'), 'error bodies': bodies.join('\n'), metrics };
    // What may not show anywhere: the keys (as client secrets), the tokens (and each one's signature alone),
    // and the private halves of the signing keys.
    const hidden = [
      ...secrets.map((secret) => secret.slice('pet_'.length)),
      ...tokens,
      ...tokens.map((token) => token.split('.')[2]!),
      ...privateParts,
    ];
    for (const [place, text] of Object.entries(places))
      for (const secret of hidden) expect(text.includes(secret), `${place} holds a secret`).toBe(false);
  });
});
