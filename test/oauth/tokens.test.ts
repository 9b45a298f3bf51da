/**
 * OAuth 2.0 client credentials (oauth/, docs/tokens.md): the grant and its errors in OAuth's shape, the signing keys
 * in the store and their rotation, Bearer tokens wherever a key goes, and every token that must fail failing.
 */
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  generateKeyPair,
  importJWK,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import type { Received } from '../helpers/over-socket.js';

let t: TestApp;
afterEach(async () => t?.close());

const ISSUER = 'http://petstore.test';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const ALL = 'pets:read orders:read orders:write webhooks:write';

async function client(test = true) {
  const created = await t.keys.create({ plan: 'free', test });
  return { id: created.record.id, secret: created.key };
}
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

async function token(c: { id: string; secret: string }, scope?: string): Promise<string> {
  const answer = await t.request({
    method: 'POST',
    url: '/oauth/token',
    headers: { ...FORM, authorization: basic(c.id, c.secret) },
    payload: form({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return json(answer).access_token;
}
const bearer = (access: string, url = '/pets/1', more: Record<string, string> = {}) =>
  t.request({ url, headers: { authorization: `Bearer ${access}`, 'petstore-version': NEWEST_VERSION, ...more } });

/** The store's current signing key, as a forger who stole it would hold it: to make tokens only it could sign. */
async function storeSigningKey(): Promise<{ kid: string; key: CryptoKey }> {
  const row = await t.db
    .selectFrom('oauth_signing_keys')
    .select(['kid', 'private_jwk'])
    .orderBy('not_before', 'desc')
    .executeTakeFirstOrThrow();
  return { kid: row.kid, key: (await importJWK(JSON.parse(row.private_jwk) as JWK, 'ES256')) as CryptoKey };
}

function expectInvalidToken(answer: Received, words: RegExp): void {
  expect(answer.statusCode, answer.body).toBe(401);
  expect(answer.headers['www-authenticate']).toMatch(
    /^Bearer realm="petstore", error="invalid_token", error_description="/,
  );
  expect(answer.headers['www-authenticate']).toMatch(words);
  expect(json(answer)).toMatchObject({ code: 'invalid-token', status: 401 });
  expect(json(answer).detail).toMatch(words);
}

describe('the client credentials grant', () => {
  it('is discovered through RFC 8414, and its JWKS verifies the tokens it issues', async () => {
    t = await testApp();
    const metadata = await t.request({ url: '/.well-known/oauth-authorization-server' });
    expect(metadata.statusCode).toBe(200);
    expect(json(metadata)).toEqual({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/oauth/token`,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ALL.split(' '),
      response_types_supported: [],
      service_documentation: `${ISSUER}/docs`,
    });
    const c = await client();
    for (const headers of [{ authorization: basic(c.id, c.secret) }, {} as Record<string, string>]) {
      const answer = await t.request({
        method: 'POST',
        url: '/oauth/token',
        headers: { ...FORM, ...headers },
        payload: form({
          grant_type: 'client_credentials',
          ...('authorization' in headers ? {} : { client_id: c.id, client_secret: c.secret }),
        }),
      });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.headers['cache-control']).toBe('no-store');
      // An API request of the key: counted, with its headers.
      expect(answer.headers['x-ratelimit-limit']).toBe('60');
      const body = json(answer);
      expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 3600, scope: ALL });
      expect(decodeProtectedHeader(body.access_token)).toMatchObject({
        alg: 'ES256',
        typ: 'at+jwt',
        kid: expect.any(String),
      });
      const jwks = json(await t.request({ url: '/.well-known/jwks.json' }));
      const { payload } = await jwtVerify(body.access_token, createLocalJWKSet(jwks), {
        issuer: ISSUER,
        audience: ISSUER,
        typ: 'at+jwt',
        currentDate: new Date(t.clock()),
      });
      expect(payload).toMatchObject({
        sub: c.id,
        client_id: c.id,
        scope: ALL,
        exp: Math.floor(t.clock() / 1000) + 3600,
      });
      expect(payload.jti).toEqual(expect.any(String));
      expect(payload.iat).toBe(Math.floor(t.clock() / 1000));
    }
    const usage = await t.request({ url: '/usage', headers: { 'x-api-key': c.secret } });
    expect(json(usage).windows.minute.used).toBe(2);
  });

  it('answers each error of RFC 6749 §5.2 in its shape and status, and issues nothing', async () => {
    t = await testApp();
    const c = await client();
    const other = await client();
    const revoked = await client(false);
    await t.keys.revoke(revoked.id);
    const grant = { grant_type: 'client_credentials' };
    const cases: {
      name: string;
      headers?: Record<string, string>;
      payload: string;
      status: number;
      error: string;
      basic?: boolean;
    }[] = [
      {
        name: 'wrong secret (Basic)',
        headers: { authorization: basic(c.id, other.secret) },
        payload: form(grant),
        status: 401,
        error: 'invalid_client',
        basic: true,
      },
      {
        name: 'wrong secret (form)',
        payload: form({ ...grant, client_id: c.id, client_secret: other.secret }),
        status: 401,
        error: 'invalid_client',
      },
      {
        name: 'unknown client',
        headers: { authorization: basic('key_0000000000000000', c.secret) },
        payload: form(grant),
        status: 401,
        error: 'invalid_client',
        basic: true,
      },
      {
        name: 'a made-up secret',
        payload: form({ ...grant, client_id: c.id, client_secret: 'pet_madeupmadeupmadeupmadeupmadeup' }),
        status: 401,
        error: 'invalid_client',
      },
      { name: 'no credentials', payload: form(grant), status: 401, error: 'invalid_client' },
      {
        name: 'both methods',
        headers: { authorization: basic(c.id, c.secret) },
        payload: form({ ...grant, client_id: c.id, client_secret: c.secret }),
        status: 400,
        error: 'invalid_request',
      },
      {
        name: 'missing grant_type',
        headers: { authorization: basic(c.id, c.secret) },
        payload: form({}),
        status: 400,
        error: 'invalid_request',
      },
      {
        name: 'unknown grant_type',
        headers: { authorization: basic(c.id, c.secret) },
        payload: form({ grant_type: 'password' }),
        status: 400,
        error: 'unsupported_grant_type',
      },
      {
        name: 'unknown scope',
        headers: { authorization: basic(c.id, c.secret) },
        payload: form({ ...grant, scope: 'pets:read pets:write' }),
        status: 400,
        error: 'invalid_scope',
      },
      {
        name: 'grant_type twice',
        headers: { authorization: basic(c.id, c.secret) },
        payload: `${form(grant)}&${form(grant)}`,
        status: 400,
        error: 'invalid_request',
      },
      {
        name: 'a revoked key',
        headers: { authorization: basic(revoked.id, revoked.secret) },
        payload: form(grant),
        status: 401,
        error: 'invalid_client',
        basic: true,
      },
    ];
    for (const { name, headers = {}, payload, status, error, basic: challenged } of cases) {
      const answer = await t.request({
        method: 'POST',
        url: '/oauth/token',
        headers: { ...FORM, ...headers },
        payload,
      });
      expect([name, answer.statusCode], answer.body).toEqual([name, status]);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(Object.keys(json(answer)).sort()).toEqual(['error', 'error_description']);
      expect([name, json(answer).error]).toEqual([name, error]);
      expect([name, answer.headers['www-authenticate']]).toEqual([
        name,
        challenged ? 'Basic realm="petstore"' : undefined,
      ]);
      expect(answer.body).not.toContain(c.secret);
      expect(answer.body).not.toContain(other.secret);
    }
    const asJson = await t.request({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/json', authorization: basic(c.id, c.secret) },
      payload: { grant_type: 'client_credentials' },
    });
    expect(asJson.statusCode).toBe(400);
    expect(json(asJson)).toEqual({
      error: 'invalid_request',
      error_description: expect.stringContaining('application/x-www-form-urlencoded'),
    });
  });

  it('signs with keys kept in the store that rotate: old tokens live until they expire, the JWKS holds both', async () => {
    const rotation = 30 * 86_400_000;
    t = await testApp();
    const c = await client(false);
    // Ten minutes before a rotation: a token signed by the key of the period ending.
    t.clock.set(new Date(Math.ceil(t.clock() / rotation) * rotation - 600_000).toISOString());
    const old = await token(c);
    t.clock.advance(1_200_000);
    const young = await token(c);
    const [oldKid, youngKid] = [old, young].map((jwt) => decodeProtectedHeader(jwt).kid);
    expect(oldKid).not.toBe(youngKid);
    const kids = () =>
      t.request({ url: '/.well-known/jwks.json' }).then((answer) => json(answer).keys.map((key: JWK) => key.kid));
    expect(await kids()).toEqual([youngKid, oldKid]);
    expect((await bearer(old)).statusCode).toBe(200);
    expect((await bearer(young)).statusCode).toBe(200);
    // The old token's hour ends (it was issued 20 minutes ago).
    t.clock.advance(40 * 60_000);
    expectInvalidToken(await bearer(old), /expired/);
    expect((await bearer(young)).statusCode).toBe(200);
    // No token the old key signed can be alive an hour after it stopped signing: it leaves the JWKS.
    t.clock.advance(10 * 60_000);
    expect(await kids()).toEqual([youngKid]);
    // Another instance on the same store signs with the same key.
    const rows = await t.db.selectFrom('oauth_signing_keys').select('kid').execute();
    expect(rows.map((row) => row.kid)).toContain(youngKid);
  });
});

describe('a Bearer token', () => {
  it('is accepted by every API operation, and the request is its key’s', async () => {
    t = await testApp();
    const c = await client();
    const access = await token(c);
    const document = json(await t.request({ url: '/openapi.json' }));
    let operations = 0;
    for (const [path, item] of Object.entries(
      document.paths as Record<string, Record<string, { security?: object[] }>>,
    ))
      for (const [method, operation] of Object.entries(item)) {
        if (!operation.security?.some((scheme) => 'OAuth2' in scheme)) continue;
        operations++;
        // The stream, resumed after an id it does not keep: a 400 that ends, where a stream would not.
        const url = path.replace(/\{[^}]+\}/g, 'x_1') + (path === '/events/stream' ? '?after=evt_x' : '');
        const answer = await t.request({
          method: method.toUpperCase(),
          url,
          headers: { authorization: `Bearer ${access}`, 'petstore-version': NEWEST_VERSION },
          ...(['post', 'put', 'patch'].includes(method) ? { payload: {} } : {}),
        });
        expect([method, path, answer.statusCode], answer.body).not.toEqual([method, path, 401]);
        expect([method, path, answer.statusCode], answer.body).not.toEqual([method, path, 403]);
      }
    expect(operations).toBeGreaterThan(25);
    // Its windows: the key's, whichever way in.
    const byKey = await t.request({ url: '/usage', headers: { 'x-api-key': c.secret } });
    const byToken = await bearer(access, '/usage');
    expect(json(byToken).windows).toEqual(json(byKey).windows);
    // Its clock: the key's.
    await t.request({
      method: 'POST',
      url: '/test-clock/advance',
      headers: { 'x-api-key': c.secret },
      payload: { seconds: 60 },
    });
    expect(json(await bearer(access, '/test-clock')).offsetSeconds).toBe(60);
  });

  it('fails with RFC 6750’s challenge when expired, forged, foreign, changed or of a revoked key', async () => {
    t = await testApp();
    const c = await client();
    const access = await token(c);
    const [header, payload] = access.split('.');
    const claims = decodeJwt(access);
    const { kid, key } = await storeSigningKey();
    const sign = (changes: object, alg = 'ES256', signer: CryptoKey | Uint8Array = key, keyId = kid) =>
      new SignJWT({ ...claims, ...changes }).setProtectedHeader({ alg, typ: 'at+jwt', kid: keyId }).sign(signer);
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid })).toString('base64url')}.${payload}.`;
    const jwks = json(await t.request({ url: '/.well-known/jwks.json' }));
    const publicKeyAsSecret = new TextEncoder().encode(JSON.stringify(jwks.keys[0]));
    const stranger = (await generateKeyPair('ES256')).privateKey;
    const changed = `${header}.${Buffer.from(JSON.stringify({ ...claims, scope: ALL, sub: claims.sub, exp: (claims.exp ?? 0) + 86_400 })).toString('base64url')}.${access.split('.')[2]}`;
    const forged: [string, string, RegExp][] = [
      ['alg none', none, /not signed with ES256/],
      ['HS256 with the public key', await sign({}, 'HS256', publicKeyAsSecret), /not signed with ES256/],
      ['an unknown kid', await sign({}, 'ES256', stranger, 'made-up'), /key this API does not know/],
      ['another key, the same kid', await sign({}, 'ES256', stranger), /signature does not verify/],
      ['another audience', await sign({ aud: 'https://elsewhere.example' }), /another audience/],
      ['another issuer', await sign({ iss: 'https://elsewhere.example' }), /not issued by this API/],
      ['a changed payload', changed, /signature does not verify/],
      ['not a JWT', 'abc.def', /not a JWT/],
    ];
    const used = async () =>
      json(await t.request({ url: '/usage', headers: { 'x-api-key': c.secret } })).windows.minute.used;
    const before = await used();
    for (const [name, jwt, words] of forged) {
      const answer = await bearer(jwt);
      expect(name).toBeTruthy();
      expectInvalidToken(answer, words);
    }
    // Not the service's: counted against the address, like an unknown key, never against the key named inside.
    expect(await used()).toBe(before);
    const unknownKey = await t.request({
      url: '/pets/1',
      headers: { 'x-api-key': 'pet_madeupmadeupmadeupmadeupmadeup' },
    });
    expect(Number(unknownKey.headers['x-ratelimit-remaining'])).toBe(
      Number(unknownKey.headers['x-ratelimit-limit']) - forged.length - 1,
    );
    // Expired in the key's time: the request is the key's (counted, with its headers).
    await t.request({
      method: 'POST',
      url: '/test-clock/advance',
      headers: { 'x-api-key': c.secret },
      payload: { seconds: 3600 },
    });
    const expired = await bearer(access);
    expectInvalidToken(expired, /expired/);
    expect(expired.headers['x-ratelimit-limit']).toBe('60');
    // A token of a revoked key.
    const live = await client(false);
    const liveToken = await token(live);
    expect((await bearer(liveToken)).statusCode).toBe(200);
    await t.keys.revoke(live.id);
    expectInvalidToken(await bearer(liveToken), /revoked/);
    // A live key's token dies an hour after it was issued.
    const later = await client(false);
    const hour = await token(later);
    t.clock.advance(3_599_000);
    expect((await bearer(hour)).statusCode).toBe(200);
    t.clock.advance(1_000);
    expectInvalidToken(await bearer(hour), /expired/);
  });

  it('dies an hour of real time after it was issued, even on a frozen test clock', async () => {
    t = await testApp();
    const c = await client();
    await t.request({ method: 'POST', url: '/test-clock/freeze', headers: { 'x-api-key': c.secret } });
    const access = await token(c);
    t.clock.advance(3_599_000);
    expect((await bearer(access)).statusCode).toBe(200);
    t.clock.advance(1_000);
    expectInvalidToken(await bearer(access), /expired/);
  });

  it('is refused beside X-API-Key (400), and a request with neither names both ways in', async () => {
    t = await testApp();
    const c = await client();
    const access = await token(c);
    const both = await bearer(access, '/pets/1', { 'x-api-key': c.secret });
    expect(both.statusCode).toBe(400);
    expect(json(both).errors).toEqual([
      { in: 'header', name: 'Authorization', message: expect.stringContaining('not both') },
    ]);
    const neither = await t.request({ url: '/pets/1' });
    expect(neither.statusCode).toBe(401);
    expect(neither.headers['www-authenticate']).toBe('Bearer realm="petstore"');
    expect(json(neither).detail).toMatch(/X-API-Key.*Bearer/);
  });

  it('does what its scope allows: anything else is a 403 insufficient_scope naming the scope needed', async () => {
    t = await testApp();
    const c = await client();
    const reader = await token(c, 'pets:read');
    expect((await bearer(reader, '/pets/1')).statusCode).toBe(200);
    const placed = await t.request({
      method: 'POST',
      url: '/store/orders',
      headers: { authorization: `Bearer ${reader}`, 'petstore-version': NEWEST_VERSION },
      payload: { petId: 1, quantity: 1 },
    });
    expect(placed.statusCode).toBe(403);
    expect(placed.headers['www-authenticate']).toBe(
      'Bearer realm="petstore", error="insufficient_scope", scope="orders:write"',
    );
    expect(json(placed)).toMatchObject({ code: 'insufficient-scope', scope: 'orders:write' });
    // Counted: the key's request.
    expect(placed.headers['x-ratelimit-remaining']).toBe('57');
    // Operations of no scope take any token of the key.
    expect((await bearer(reader, '/usage')).statusCode).toBe(200);
    expect((await bearer(reader, '/store/orders')).statusCode).toBe(403);
  });
});
