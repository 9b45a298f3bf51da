import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OLDEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { client as clientOf, failedAt, passed } from './graded-client.js';

/**
 * The checks of requests (docs/testing-clients.md#is-my-client-a-good-api-citizen), each shown both ways: a client that
 * does it right and one that does it wrong, through the situation, with the failure's request id and detail. Waits pass
 * by the key's test clock or the service's fake clock; nothing sleeps. (The receiver exam: ./exam.test.ts; the
 * in-flight allowance: ./parallel-clients.test.ts; a real reset connection: ./lost-answers.test.ts; backs-off's
 * bound: ./backs-off.unit.test.ts.)
 */

const PETS_SUNSET = '2027-03-01T00:00:00.000Z';
const VERSION_SUNSET = '2027-07-01T00:00:00.000Z';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({
    env: {
      PETS_GET_DEPRECATED_AT: '2026-01-01T00:00:00Z',
      PETS_GET_SUNSET_AT: PETS_SUNSET,
      OLDEST_VERSION_SUNSET_AT: VERSION_SUNSET,
    },
  });
});
afterAll(async () => {
  await t.close();
});
const client = (plan?: 'free' | 'pro', apiVersion?: string) => clientOf(t, plan, apiVersion);

describe('idempotent-retries', () => {
  const order = { petId: 1, quantity: 1 };
  it('a POST repeated after a 503 with its first Idempotency-Key passes', async () => {
    const c = await client('pro');
    const first = await c.send('/store/orders', {
      method: 'POST',
      payload: order,
      headers: { prefer: 'fault=503', 'idempotency-key': 'order-1' },
    });
    expect(first.statusCode).toBe(503);
    t.clock.advance(Number(first.headers['retry-after']) * 1000);
    expect(
      (await c.send('/store/orders', { method: 'POST', payload: order, headers: { 'idempotency-key': 'order-1' } }))
        .statusCode,
    ).toBe(201);
    passed(await c.check('idempotent-retries'));
  });

  it('a repeat without an Idempotency-Key fails; so does one with another key than the first try', async () => {
    const bare = await client('pro');
    await bare.send('/store/orders', { method: 'POST', payload: order, headers: { prefer: 'fault=500' } });
    t.clock.advance(1_000);
    const again = await bare.send('/store/orders', { method: 'POST', payload: order });
    failedAt(
      await bare.check('idempotent-retries'),
      again.id,
      /^repeated POST \/store\/orders without an Idempotency-Key 1 s after a 500$/,
    );

    const switched = await client('pro');
    await switched.send('/store/orders', {
      method: 'POST',
      payload: order,
      headers: { prefer: 'fault=500', 'idempotency-key': 'a' },
    });
    const other = await switched.send('/store/orders', {
      method: 'POST',
      payload: order,
      headers: { 'idempotency-key': 'b' },
    });
    failedAt(await switched.check('idempotent-retries'), other.id, /with another Idempotency-Key than its first try$/);
  });

  it('another POST after a failed one (another body) is not its repeat', async () => {
    const c = await client('pro');
    expect(
      (await c.send('/store/orders', { method: 'POST', payload: order, headers: { prefer: 'fault=500' } })).statusCode,
    ).toBe(500);
    expect((await c.send('/store/orders', { method: 'POST', payload: { petId: 2, quantity: 1 } })).statusCode).toBe(
      201,
    );
    expect((await c.check('idempotent-retries')).status).toBe('untested');
  });

  it('a POST that failed with a 4xx is an answer: its repeat is not the situation', async () => {
    const c = await client('pro');
    await c.send('/store/orders', { method: 'POST', payload: { petId: 1, quantity: 0 } });
    await c.send('/store/orders', { method: 'POST', payload: { petId: 1, quantity: 0 } });
    expect((await c.check('idempotent-retries')).status).toBe('untested');
  });
});

describe('revalidates', () => {
  it('GETs with If-None-Match of what was read pass; the third GET in a row without it fails', async () => {
    const good = await client('pro');
    const read = await good.send('/pets/1');
    for (let i = 0; i < 4; i++)
      expect((await good.send('/pets/1', { headers: { 'if-none-match': String(read.headers.etag) } })).statusCode).toBe(
        304,
      );
    passed(await good.check('revalidates'));

    const bad = await client('pro');
    await bad.send('/pets/1');
    await bad.send('/pets/1');
    await bad.send('/pets/1');
    t.clock.advance(2_000);
    const third = await bad.send('/pets/1');
    failedAt(
      await bad.check('revalidates'),
      third.id,
      /^GET \/pets\/1 3 times in a row without If-None-Match, its ETag received 2 s before$/,
    );
  });

  it('an ETag older than 10 minutes opens no situation', async () => {
    const c = await client('pro');
    await c.send('/pets/1');
    await c.advance(601);
    await c.send('/pets/1');
    expect((await c.check('revalidates')).status).toBe('untested');
  });
});

describe('pins-version', () => {
  it('every request with a known Petstore-Version passes; one without, or with an unknown one, fails', async () => {
    const good = await client('pro');
    await good.send('/pets/1');
    await good.send('/store/orders', { headers: { 'petstore-version': OLDEST_VERSION } });
    passed(await good.check('pins-version'));

    const bad = await client('pro');
    const bare = await bad.send('/pets/1', { pinned: false });
    failedAt(await bad.check('pins-version'), bare.id, /^GET \/pets\/1 carried no Petstore-Version$/);
    const unknown = await bad.send('/pets/1', { headers: { 'petstore-version': '1999-01-01' } });
    failedAt(await bad.check('pins-version'), unknown.id, /named a Petstore-Version this API does not know$/);
  });
});

describe('stops-after-gone', () => {
  it('a client that stops calling a gone operation passes; one that asks 3 more times fails', async () => {
    const good = await client('pro');
    await good.advance(Math.ceil((Date.parse(PETS_SUNSET) - t.clock()) / 1000) + 1);
    expect((await good.send('/pets/1')).statusCode).toBe(410);
    expect((await good.send('/pets?limit=1')).statusCode).toBe(200);
    passed(await good.check('stops-after-gone'));

    const bad = await client('pro');
    await bad.advance(Math.ceil((Date.parse(PETS_SUNSET) - t.clock()) / 1000) + 1);
    await bad.send('/pets/1');
    let last = '';
    for (const id of [2, 3, 4]) last = (await bad.send(`/pets/${id}`)).id;
    failedAt(await bad.check('stops-after-gone'), last, /^asked for GET \/pets\/\{petId\} 3 more times after its 410$/);
  });

  it('a gone version: asking in it 3 more times fails; moving to a version in force passes', async () => {
    const bad = await client('pro', OLDEST_VERSION);
    await bad.advance(Math.ceil((Date.parse(VERSION_SUNSET) - t.clock()) / 1000) + 1);
    const gone = await bad.send('/store/orders', { pinned: false });
    expect(gone.statusCode).toBe(410);
    let last = '';
    for (let i = 0; i < 3; i++) last = (await bad.send('/store/orders', { pinned: false })).id;
    failedAt(
      await bad.check('stops-after-gone'),
      last,
      new RegExp(`^asked for version ${OLDEST_VERSION} 3 more times after its 410$`),
    );

    const good = await client('pro', OLDEST_VERSION);
    await good.advance(Math.ceil((Date.parse(VERSION_SUNSET) - t.clock()) / 1000) + 1);
    await good.send('/store/orders', { headers: { 'petstore-version': OLDEST_VERSION } });
    for (let i = 0; i < 3; i++) expect((await good.send('/store/orders')).statusCode).toBe(200);
    passed(await good.check('stops-after-gone'));
  });
});

describe('cursor-untouched', () => {
  it('a cursor passed back as given passes; an edited one, or another listing’s, fails', async () => {
    const c = await client('pro');
    const page = json<{ nextCursor: string }>(await c.send('/pets?limit=2'));
    expect((await c.send(`/pets?limit=2&cursor=${page.nextCursor}`)).statusCode).toBe(200);
    passed(await c.check('cursor-untouched'));

    const edited = `${page.nextCursor.slice(0, -2)}AA`;
    const bad = await c.send(`/pets?limit=2&cursor=${edited}`);
    expect(bad.statusCode).toBe(400);
    failedAt(
      await c.check('cursor-untouched'),
      bad.id,
      /^the cursor sent to \/pets is not one this API gave this key for this listing$/,
    );
    const otherListing = await c.send(`/pets?limit=2&status=sold&cursor=${page.nextCursor}`);
    expect(otherListing.statusCode).toBe(400);
    expect((await c.check('cursor-untouched')).failed).toBe(2);
  });
});

describe('a fixed size', () => {
  it('keeps the latest 10 failures of a check, newest first, however many there were', async () => {
    const c = await client('pro');
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await c.send(`/pets/${(i % 9) + 1}`, { pinned: false })).id);
    const check = await c.check('pins-version');
    expect(check).toMatchObject({ seen: 25, failed: 25 });
    expect(check.failures.map((f) => f.requestId)).toEqual(ids.slice(-10).reverse());
  });
});
