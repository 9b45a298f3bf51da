/**
 * The typed client with client credentials (docs/client.md, docs/tokens.md): one access token for all its callers,
 * asked for once and renewed once, shortly before it expires or after the service refused it, each token request
 * through the client's gate; a test key's card passes `reuses-tokens` and `renews-expired-tokens`. Against the real
 * server, on a fake clock that the client shares; the key's own clock is moved by the test, behind the client's back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Fetch,
  InsufficientScopeError,
  InvalidTokenError,
  PetstoreClient,
  type PetstoreClientOptions,
  type ReportCard,
  UnauthorizedError,
} from '../../client/index.js';
import { type AccessToken, AccessTokens } from '../../client/tokens.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { BASE_URL, clientOptions, injectFetch } from './harness.js';

let t: TestApp;
afterEach(async () => t?.close());

/** A request the client sent: when (the shared clock), which operation, with which token, and its answer's status. */
interface Sent {
  at: number;
  route: string;
  token: string | undefined;
  status: number;
  retryAfter: string | null;
}

const TOKEN_ROUTE = 'POST /oauth/token';
const PETS = [1, 2, 3, 4, 5, 6, 7, 8];

/** A test key's client by its client credentials, keeping every request it sends; and the test's hold on the key. */
async function tokenClient(more: Partial<PetstoreClientOptions> = {}) {
  const { record, key } = await t.keys.create({ plan: 'pro', test: true });
  const sent: Sent[] = [];
  const inject = more.fetch ?? injectFetch(t.app);
  const fetch: Fetch = async (request) => {
    const at = t.clock();
    const route = `${request.method} ${new URL(request.url).pathname}`;
    const token = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
    const response = await inject(request);
    sent.push({ at, route, token, status: response.status, retryAfter: response.headers.get('retry-after') });
    return response;
  };
  const credentials = { clientId: record.id, clientSecret: key };
  const client = new PetstoreClient({ ...clientOptions(t.app, t.clock, credentials), ...more, fetch });
  const asKey = { 'x-api-key': key };
  const card = async () => json<ReportCard>(await t.request({ url: '/report-card', headers: asKey }));
  return {
    key,
    client,
    sent,
    tokenRequests: () => sent.filter((request) => request.route === TOKEN_ROUTE),
    /** The key's clock moved by the test (as a test of expiry does), not by the client: the client's clock stays. */
    advanceKeyClock: async (seconds: number) => {
      const moved = await t.request({
        method: 'POST',
        url: '/test-clock/advance',
        headers: asKey,
        payload: { seconds },
      });
      expect(moved.statusCode).toBe(200);
    },
    check: async (id: string) => (await card()).checks.find((check) => check.id === id),
    /** The ids of the card's checks that failed. */
    failedChecks: async () =>
      (await card()).checks.filter((check) => check.status === 'failed').map((check) => check.id),
  };
}

describe('one token for every caller', () => {
  it('eight parallel calls share one token request, and each carries that token', async () => {
    t = await testApp();
    const c = await tokenClient();
    const pets = await Promise.all(PETS.map((petId) => c.client.getPet(petId)));
    expect(pets.map((pet) => pet.id)).toEqual(PETS);
    expect(c.tokenRequests()).toHaveLength(1);
    expect(c.sent[0]!.route).toBe(TOKEN_ROUTE);
    const reads = c.sent.filter((request) => request.route !== TOKEN_ROUTE);
    expect(reads.map((read) => [read.status, read.token])).toEqual(PETS.map(() => [200, c.sent[1]!.token]));
    expect(c.sent[1]!.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(await c.check('reuses-tokens')).toMatchObject({ status: 'passed', seen: 1, failed: 0 });
    expect(await c.failedChecks()).toEqual([]);
  });

  it('renews once, for eight parallel callers, 30 s before the token expires by the client’s clock', async () => {
    t = await testApp();
    const c = await tokenClient();
    await Promise.all(PETS.map((petId) => c.client.getPet(petId)));
    // 40 s left: kept. 25 s left: renewed, once for all eight.
    t.clock.advance(3_560_000);
    await Promise.all(PETS.map((petId) => c.client.getPet(petId)));
    expect(c.tokenRequests()).toHaveLength(1);
    t.clock.advance(15_000);
    await Promise.all(PETS.map((petId) => c.client.getPet(petId)));
    expect(c.tokenRequests().map((request) => request.at)).toEqual([c.sent[0]!.at, t.clock()]);
    const [first, second] = [c.sent[1]!.token, c.sent.at(-1)!.token];
    expect(second).not.toBe(first);
    expect(c.sent.slice(-8).map((request) => request.token)).toEqual(PETS.map(() => second));
    // Asked for with 25 s left, under the card's 60 s: the card passes it.
    expect(await c.check('reuses-tokens')).toMatchObject({ status: 'passed', seen: 2, failed: 0 });
    expect(await c.failedChecks()).toEqual([]);
  });

  it('asks for its token through the gate: a 429 to the token request is waited out, then retried', async () => {
    t = await testApp();
    const c = await tokenClient({ random: () => 0 });
    const steps = [{ match: TOKEN_ROUTE, answer: '429' }];
    const armed = await t.request({
      method: 'PUT',
      url: '/test-scenario',
      headers: { 'x-api-key': c.key },
      payload: { steps },
    });
    expect(armed.statusCode).toBe(200);
    await c.client.getPet(1);
    const [refused, granted, read] = c.sent;
    expect([refused, granted, read].map((request) => `${request!.route} ${request!.status}`)).toEqual([
      `${TOKEN_ROUTE} 429`,
      `${TOKEN_ROUTE} 200`,
      'GET /pets/1 200',
    ]);
    expect(Number(refused!.retryAfter)).toBeGreaterThan(0);
    expect(granted!.at - refused!.at).toBeGreaterThanOrEqual(1000 * Number(refused!.retryAfter));
  });
});

describe('a token refused as expired', () => {
  it('after the key’s clock moved past its life, one renewal and the call answered; the refused token never again', async () => {
    t = await testApp();
    const c = await tokenClient();
    await c.client.getPet(1);
    await c.advanceKeyClock(3600);
    expect((await c.client.getPet(1)).id).toBe(1);
    const old = c.sent[1]!.token;
    expect(c.sent.slice(2).map((request) => `${request.route} ${request.status}`)).toEqual([
      'GET /pets/1 401',
      `${TOKEN_ROUTE} 200`,
      'GET /pets/1 304',
    ]);
    expect(c.sent[2]!.token).toBe(old);
    expect(c.sent[4]!.token).not.toBe(old);
    await c.client.listPets({ limit: 1 });
    expect(c.sent.filter((request) => request.token === old)).toHaveLength(2);
    expect(c.tokenRequests()).toHaveLength(2);
    expect(await c.check('renews-expired-tokens')).toMatchObject({ status: 'passed', seen: 1, failed: 0 });
    expect(await c.check('reuses-tokens')).toMatchObject({ status: 'passed', seen: 2, failed: 0 });
    expect(await c.failedChecks()).toEqual([]);
  });

  it('eight callers refused at once renew once, and each is answered', async () => {
    t = await testApp();
    const c = await tokenClient();
    await c.client.getPet(1);
    await c.advanceKeyClock(3600);
    const pets = await Promise.all(PETS.map((petId) => c.client.getPet(petId)));
    expect(pets.map((pet) => pet.id)).toEqual(PETS);
    expect(c.tokenRequests()).toHaveLength(2);
    const renewal = c.sent.indexOf(c.tokenRequests()[1]!);
    expect(c.sent.slice(2, renewal).map((request) => request.status)).toEqual(PETS.map(() => 401));
    const fresh = c.sent.slice(renewal + 1);
    expect(fresh.map((request) => request.status).sort()).toEqual([...PETS.map(() => 200).slice(1), 304].sort());
    expect(new Set(fresh.map((request) => request.token))).toEqual(new Set([c.sent[renewal + 1]!.token]));
    expect(fresh[0]!.token).not.toBe(c.sent[1]!.token);
  });

  it('a renewed token refused too: the call fails with InvalidTokenError, after one renewal', async () => {
    t = await testApp();
    // Every API answer a 401 invalid_token, as for a token the service does not know.
    const inject = injectFetch(t.app);
    const refuse: Fetch = async (request) => {
      if (new URL(request.url).pathname === '/oauth/token') return inject(request);
      const challenge = 'Bearer realm="petstore", error="invalid_token", error_description="The access token expired."';
      const problem = {
        type: `${BASE_URL}/problems/invalid-token`,
        code: 'invalid-token',
        title: 'Invalid access token',
        status: 401,
        detail: 'The access token expired.',
      };
      return new Response(JSON.stringify(problem), {
        status: 401,
        headers: { 'content-type': 'application/problem+json', 'www-authenticate': challenge },
      });
    };
    const c = await tokenClient({ fetch: refuse });
    await expect(c.client.listOrders()).rejects.toBeInstanceOf(InvalidTokenError);
    expect(c.sent.map((request) => `${request.route} ${request.status}`)).toEqual([
      `${TOKEN_ROUTE} 200`,
      'GET /store/orders 401',
      `${TOKEN_ROUTE} 200`,
      'GET /store/orders 401',
    ]);
    expect(c.sent[3]!.token).not.toBe(c.sent[1]!.token);
  });
});

describe('client credentials refused, and scopes', () => {
  it('wrong credentials: UnauthorizedError with OAuth’s error, and the call is not sent', async () => {
    t = await testApp();
    const { record } = await t.keys.create({ plan: 'pro', test: true });
    const wrong = { clientId: record.id, clientSecret: 'pet_test_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' };
    const client = new PetstoreClient(clientOptions(t.app, t.clock, wrong));
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).message).toMatch(/^invalid_client: /);
  });

  it('a token without the scope an operation needs: InsufficientScopeError naming it, not retried', async () => {
    t = await testApp();
    const c = await tokenClient({ scope: 'pets:read' });
    expect((await c.client.listPets({ limit: 1 })).data).toHaveLength(1);
    const error = (await c.client.listOrders().catch((e: unknown) => e)) as InsufficientScopeError;
    expect(error).toBeInstanceOf(InsufficientScopeError);
    expect([error.status, error.scope]).toEqual([403, 'orders:read']);
    expect(c.tokenRequests()).toHaveLength(1);
  });

  it('takes an API key, or client credentials, not both nor neither', () => {
    expect(() => new PetstoreClient({ baseUrl: BASE_URL })).toThrow(TypeError);
    expect(() => new PetstoreClient({ apiKey: 'pet_x', clientId: 'key_x', clientSecret: 'pet_x' })).toThrow(TypeError);
  });
});

describe('the shared token, alone', () => {
  /** Tokens whose requests the test answers, one by one. */
  function answeredByHand() {
    const pending: ((token: AccessToken) => void)[] = [];
    const tokens = new AccessTokens(
      () => new Promise((answer) => pending.push(answer)),
      () => 0,
    );
    const answer = (value: string) =>
      pending.shift()!({ access_token: value, token_type: 'Bearer', expires_in: 3600, scope: 'pets:read' });
    return { tokens, pending, answer };
  }

  it('a caller that asked for the token as it was refused gets the one that replaces it: one renewal for all', async () => {
    const { tokens, pending, answer } = answeredByHand();
    const first = tokens.get();
    answer('one');
    expect(await first).toBe('one');
    // A caller asks for the token; before it has it, the service refuses it to two others, and one more caller asks.
    const waiting = tokens.get();
    tokens.refused('one');
    tokens.refused('one');
    const after = tokens.get();
    await new Promise((resolve) => setImmediate(resolve));
    expect(pending).toHaveLength(1);
    answer('two');
    expect([await waiting, await after, await tokens.get()]).toEqual(['two', 'two', 'two']);
  });

  it('a request for a token that failed is not kept: the next caller asks again', async () => {
    const failing = new AccessTokens(
      () => Promise.reject(new Error('no answer')),
      () => 0,
    );
    await expect(failing.get()).rejects.toThrow('no answer');
    await expect(failing.get()).rejects.toThrow('no answer');
  });
});
