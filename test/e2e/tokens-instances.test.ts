import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { postgresAvailable } from '../helpers/database.js';
import type { Server } from '../helpers/process.js';
import { redisForTests } from '../helpers/redis.js';
import { type ScaledOut, scaledOut } from '../helpers/scaled-out.js';

/**
 * Access tokens across two instances on PostgreSQL + Redis (docs/tokens.md): one signing key for both, a token
 * issued by one good on the other, and a revocation stopping the key's tokens everywhere within a second.
 */

const redis = await redisForTests();
const available = (await postgresAvailable()) && redis !== null;

describe.skipIf(!available)('access tokens, scaled out', () => {
  let two: ScaledOut;
  let a: Server;
  let b: Server;
  beforeAll(async () => {
    // One address for both, as behind a load balancer: a token's issuer and audience.
    two = await scaledOut(redis!.url, { PUBLIC_URL: 'http://petstore.test' });
    ({ a, b } = two);
  });
  afterAll(async () => two?.stop());

  const token = async (server: Server, id: string, key: string) => {
    const answer = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${id}:${key}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { access_token: string }).access_token;
  };
  const read = (server: Server, access: string) =>
    fetch(`${server.url}/pets/1`, {
      headers: { authorization: `Bearer ${access}`, 'petstore-version': NEWEST_VERSION },
    });

  it('signs with one key for both: a token of either is good on the other, and the JWKS are the same', async () => {
    const { record, key } = await two.newKey({ plan: 'pro' });
    const [fromA, fromB] = [await token(a, record.id, key), await token(b, record.id, key)];
    expect((await read(b, fromA)).status).toBe(200);
    expect((await read(a, fromB)).status).toBe(200);
    const [jwksA, jwksB] = await Promise.all(
      [a, b].map(async (server) => (await fetch(`${server.url}/.well-known/jwks.json`)).json()),
    );
    expect(jwksA).toEqual(jwksB);
    expect((jwksA as { keys: unknown[] }).keys).toHaveLength(1);
  });

  it("stops a revoked key's tokens on both instances within a second", async () => {
    const { record, key } = await two.newKey({ plan: 'pro' });
    const access = await token(a, record.id, key);
    // Both instances hold the token as verified, and its key in memory.
    for (const server of [a, b]) expect((await read(server, access)).status).toBe(200);
    await two.keys.revoke(record.id);
    const started = performance.now();
    for (const server of [a, b]) {
      let status = 200;
      while (status === 200) {
        expect(performance.now() - started).toBeLessThan(1_000);
        status = (await read(server, access)).status;
        if (status === 200) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(status).toBe(401);
      expect((await read(server, access)).headers.get('www-authenticate')).toMatch(/error="invalid_token".*revoked/);
    }
  });
});
