/** Every error answer of the real server becomes the error class of its problem type, with its members. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  BannedError,
  ConflictError,
  IdempotencyKeyReusedError,
  NotFoundError,
  PetNotAvailableError,
  PetstoreClient,
  PetstoreError,
  PROBLEM_ERRORS,
  RateLimitedError,
  SunsetError,
  UnauthorizedError,
  ValidationError,
} from '../../client/index.js';
import { PROBLEM_SLUGS } from '../../src/http/problem-types.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { clientOptions, injectFetch } from './harness.js';

let t: TestApp;

async function clientOf(plan: 'free' | 'pro' = 'pro', env?: Record<string, string>) {
  t = await testApp({ env });
  const key = await t.newKey(plan);
  return { key, client: new PetstoreClient(clientOptions(t.app, t.clock, key)) };
}

/** Sends straight to the server, around the client: to bring the key where a test needs it. */
async function hammer(key: string, times: number) {
  for (let i = 0; i < times; i++) await t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
}

it('has one error class for every problem type the server emits', () => {
  expect(Object.keys(PROBLEM_ERRORS).sort()).toEqual([...PROBLEM_SLUGS].sort());
  for (const ErrorClass of Object.values(PROBLEM_ERRORS)) expect(ErrorClass.prototype).toBeInstanceOf(PetstoreError);
});

describe('error answers of the server', () => {
  afterEach(async () => t.close());

  it('400: ValidationError lists every invalid input', async () => {
    const { client } = await clientOf();
    const error = await client.listPets({ limit: 1000, cursor: '' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    const { status, errors, requestId } = error as ValidationError;
    expect(status).toBe(400);
    expect(requestId).toBeTruthy();
    expect(errors.map((e) => `${e.in} ${e.name}`).sort()).toEqual(['query cursor', 'query limit']);
  });

  it('401: UnauthorizedError for an unknown key', async () => {
    await clientOf();
    const client = new PetstoreClient(clientOptions(t.app, t.clock, 'pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'));
    await expect(client.listOrders()).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('404: NotFoundError, with the problem body', async () => {
    const { client } = await clientOf();
    const error = (await client.getOrder(424242).catch((e: unknown) => e)) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.problem).toMatchObject({
      type: 'http://petstore.test/problems/not-found',
      status: 404,
      instance: '/store/orders/424242',
    });
  });

  it('409: PetNotAvailableError, a ConflictError', async () => {
    const { client } = await clientOf();
    const [sold] = (await client.listPets({ status: 'sold', limit: 1 })).data;
    const error = await client.placeOrder({ petId: sold!.id }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PetNotAvailableError);
    expect(error).toBeInstanceOf(ConflictError);
  });

  it('410: SunsetError once getPet is past its sunset, not retried, and not asked for again: a 410 is for good', async () => {
    const { client } = await clientOf('pro', {
      PETS_GET_DEPRECATED_AT: '2026-01-01T00:00:00Z',
      PETS_GET_SUNSET_AT: '2026-06-01T00:00:00Z',
    });
    const first = (await client.getPet(1).catch((e: unknown) => e)) as SunsetError;
    expect(first).toBeInstanceOf(SunsetError);
    expect(client.rateLimit?.windows[0]?.remaining).toBe(299);
    // Not sent: the same class, problem and request id, and nothing counted.
    const again = (await client.getPet(2).catch((e: unknown) => e)) as SunsetError;
    expect(again).toBeInstanceOf(SunsetError);
    expect([again.problem, again.requestId]).toEqual([first.problem, first.requestId]);
    expect(again.message).toMatch(/^Not sent: getPet is gone/);
    expect((await client.usage()).windows.minute.used).toBe(1);
    // Other operations are not gone.
    expect((await client.listPets({ limit: 1 })).data).toHaveLength(1);
  });

  it('422: IdempotencyKeyReusedError for the same key with another body', async () => {
    const { client } = await clientOf();
    const [pet] = (await client.listPets({ status: 'available', limit: 1 })).data;
    await client.placeOrder({ petId: pet!.id, quantity: 1 }, { idempotencyKey: 'order-1' });
    const reused = client.placeOrder({ petId: pet!.id, quantity: 2 }, { idempotencyKey: 'order-1' });
    await expect(reused).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
  });

  it('429: RateLimitedError with retryAfter, window, limit and plan', async () => {
    const { key } = await clientOf('free');
    await hammer(key, 60);
    const client = new PetstoreClient({ ...clientOptions(t.app, t.clock, key), maxAttempts: 1 });
    const error = (await client.listPets().catch((e: unknown) => e)) as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect([error.status, error.retryAfter, error.window, error.limit, error.plan]).toEqual([
      429,
      60,
      'minute',
      60,
      'free',
    ]);
  });

  it('banned: BannedError with retryAfter and bannedUntil; beyond maxWaitMs the client stops sending', async () => {
    const { key } = await clientOf('free');
    await hammer(key, 71);
    let sent = 0;
    const fetch = injectFetch(t.app);
    const client = new PetstoreClient({
      ...clientOptions(t.app, t.clock, key),
      maxWaitMs: 30_000,
      fetch: (r) => {
        sent++;
        return fetch(r);
      },
    });
    const error = (await client.listPets().catch((e: unknown) => e)) as BannedError;
    expect(error).toBeInstanceOf(BannedError);
    expect(error.retryAfter).toBe(60);
    expect(error.bannedUntil).toEqual(new Date(t.clock() + 60_000));
    const again = (await client.listPets().catch((e: unknown) => e)) as BannedError;
    expect(again).toBeInstanceOf(BannedError);
    expect(again.problem).toBeUndefined();
    expect(sent).toBe(1);
  });
});
