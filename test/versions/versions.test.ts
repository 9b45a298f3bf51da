import { afterEach, describe, expect, it } from 'vitest';
import { NEWEST_VERSION, OLDEST_VERSION, VERSIONS } from '../../src/versions/versions.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { type FakeClock, fakeClock } from '../helpers/clock.js';

/**
 * Dated versions (docs/versions.md): the version a request is answered in, said on every response; an
 * older version's records; its deprecation and its sunset. Over a real socket.
 */
let t: TestApp;
afterEach(async () => t?.close());

/* eslint-disable @typescript-eslint/no-explicit-any -- a test reads whatever a body holds; the assertions check it. */
const body = (response: { json(): unknown }): any => response.json();
const as = (key: string, version?: string) => ({
  'x-api-key': key,
  ...(version ? { 'petstore-version': version } : {}),
});

describe('versions, over a real socket', () => {
  it('a request gets the version it names, else its key’s, else the newest; every response says which', async () => {
    t = await testApp({ overSocket: true });
    const newest = await t.newKey('pro');
    const pinned = (await t.keys.create({ plan: 'pro', apiVersion: OLDEST_VERSION })).key;
    const version = async (headers: Record<string, string>, url = '/pets/1') =>
      (await t.request({ url, headers })).headers['petstore-version'];
    expect(await version(as(newest))).toBe(NEWEST_VERSION);
    expect(await version(as(pinned))).toBe(OLDEST_VERSION);
    expect(await version(as(pinned, NEWEST_VERSION))).toBe(NEWEST_VERSION);
    expect(await version(as(newest, OLDEST_VERSION))).toBe(OLDEST_VERSION);
    expect(await version({})).toBe(NEWEST_VERSION);
    expect(await version(as(pinned), '/pets/999')).toBe(OLDEST_VERSION);
    expect(await version(as(pinned), '/nowhere')).toBe(OLDEST_VERSION);
  });

  it('an unknown version is a counted 400 that lists the versions', async () => {
    t = await testApp({ overSocket: true });
    const key = await t.newKey('pro');
    for (const sent of ['2020-01-01', 'latest', `${OLDEST_VERSION}, ${NEWEST_VERSION}`]) {
      const response = await t.request({ url: '/pets/1', headers: as(key, sent) });
      expect(response.statusCode, sent).toBe(400);
      expect(body(response)).toMatchObject({ code: 'unknown-version', versions: [...VERSIONS] });
      expect(response.headers['petstore-version']).toBe(NEWEST_VERSION);
      expect(response.headers['x-ratelimit-remaining']).toBeDefined();
    }
    const usage = body(await t.request({ url: '/usage', headers: as(key) }));
    expect(usage.windows.minute.used).toBe(3);
  });

  it('the oldest version answers the records as they were before versions; the newest, its own', async () => {
    t = await testApp({ overSocket: true });
    const key = await t.newKey('pro');
    const pet = async (version: string) => (await t.request({ url: '/pets/1', headers: as(key, version) })).body;
    // Byte for byte what GET /pets/1 answered before versions existed.
    expect(await pet(OLDEST_VERSION)).toBe(
      '{"id":1,"name":"Rex","category":{"id":1,"name":"Dogs"},"photoUrls":["https://example.com/photos/rex.jpg"],"tags":[{"id":1,"name":"friendly"},{"id":2,"name":"large"}],"status":"available"}',
    );
    expect(JSON.parse(await pet(NEWEST_VERSION))).toMatchObject({
      photos: [{ url: 'https://example.com/photos/rex.jpg' }],
    });
    expect(JSON.parse(await pet(NEWEST_VERSION))).not.toHaveProperty('photoUrls');
    const listed = body(await t.request({ url: '/pets?limit=2', headers: as(key, OLDEST_VERSION) }));
    for (const one of listed.data)
      expect(Object.keys(one)).toEqual(['id', 'name', 'category', 'photoUrls', 'tags', 'status']);

    const placed = await t.request({
      method: 'POST',
      url: '/store/orders',
      headers: as(key, OLDEST_VERSION),
      payload: { petId: 1 },
    });
    expect(placed.statusCode).toBe(201);
    expect(Object.keys(body(placed))).toEqual(['id', 'petId', 'quantity', 'shipDate', 'status', 'complete']);
    expect(body(placed).complete).toBe(false);
    const id = body(placed).id as number;
    const read = (version: string, url = `/store/orders/${id}`) => t.request({ url, headers: as(key, version) });
    expect(body(await read(NEWEST_VERSION))).not.toHaveProperty('complete');
    // Each version's page, read twice (the second from memory), and again once an order is placed.
    for (let i = 0; i < 2; i++) {
      expect(body(await read(OLDEST_VERSION, '/store/orders')).data).toEqual([
        expect.objectContaining({ id, complete: false }),
      ]);
      expect(body(await read(NEWEST_VERSION, '/store/orders')).data).toEqual([
        expect.not.objectContaining({ complete: false }),
      ]);
    }
    const second = body(
      await t.request({ method: 'POST', url: '/store/orders', headers: as(key), payload: { petId: 1 } }),
    ).id as number;
    expect(
      body(await read(OLDEST_VERSION, '/store/orders')).data.map((o: { id: number; complete: boolean }) => [
        o.id,
        o.complete,
      ]),
    ).toEqual([
      [id, false],
      [second, false],
    ]);
    expect(
      body(await read(NEWEST_VERSION, '/store/orders')).data.map((o: { id: number }) => Object.keys(o).length),
    ).toEqual([5, 5]);
    // Each version's answer has its own ETag: a client holding one version's body is not told it is current in another.
    const [old, current] = [await read(OLDEST_VERSION), await read(NEWEST_VERSION)];
    expect(old.headers.etag).not.toBe(current.headers.etag);
    const revalidated = await t.request({
      url: `/store/orders/${id}`,
      headers: { ...as(key, OLDEST_VERSION), 'if-none-match': String(old.headers.etag) },
    });
    expect(revalidated.statusCode).toBe(304);
  });

  it('the oldest version is deprecated: its headers, merged with an operation’s own; then its sunset', async () => {
    t = await testApp({ overSocket: true, env: { OLDEST_VERSION_SUNSET_AT: '2027-03-01T00:00:00Z' } });
    const key = await t.newKey('pro');
    const pinned = (await t.keys.create({ plan: 'pro', apiVersion: OLDEST_VERSION })).key;
    const orders = await t.request({ url: '/store/orders', headers: as(pinned) });
    expect(orders.headers.deprecation).toBe(`@${Date.parse(`${NEWEST_VERSION}T00:00:00Z`) / 1000}`);
    expect(orders.headers.sunset).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
    expect(orders.headers.link).toBe(
      '<http://petstore.test/docs/versions>; rel="deprecation"; type="text/html", <http://petstore.test/docs/versions>; rel="sunset"; type="text/html"',
    );
    expect((await t.request({ url: '/store/orders', headers: as(key) })).headers.deprecation).toBeUndefined();
    // GET /pets/{petId} is deprecated itself (since 2026-01-01, sunset
    // 2027-07-01): the earlier instants win, and Link names both pages.
    for (const headers of [as(pinned), as(key, OLDEST_VERSION)]) {
      const pet = await t.request({ url: '/pets/1', headers });
      expect(pet.headers.deprecation).toBe(`@${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
      expect(pet.headers.sunset).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
      expect(pet.headers.link).toContain('/docs/deprecations>; rel="deprecation"');
      expect(pet.headers.link).toContain('/docs/versions>; rel="deprecation"');
    }
    expect((await t.request({ url: '/pets/1', headers: as(key) })).headers.sunset).toBe(
      'Thu, 01 Jul 2027 00:00:00 GMT',
    );

    t.clock.set('2027-03-01T00:00:00Z');
    for (const [headers, url] of [
      [as(pinned), '/pets/1'],
      [as(pinned), '/store/orders'],
      [as(key, OLDEST_VERSION), '/pets?limit=1'],
    ] as const) {
      const gone = await t.request({ url, headers });
      expect(gone.statusCode, url).toBe(410);
      expect(body(gone).code).toBe('version-sunset');
      expect(gone.headers['petstore-version']).toBe(OLDEST_VERSION);
    }
    expect((await t.request({ url: '/pets/1', headers: as(pinned, NEWEST_VERSION) })).statusCode).toBe(200);
  });

  it('a request at the sunset’s millisecond is decided once: answered in its version or refused, and counted once', async () => {
    // A clock that moves a millisecond at every read while a request is handled: started a little
    // earlier each time, the sunset falls between any two of the request's reads of it.
    const base = fakeClock();
    let ticking = false;
    const clock: FakeClock = Object.assign(
      () => {
        const now = base();
        if (ticking) base.advance(1);
        return now;
      },
      { advance: base.advance, set: base.set },
    );
    t = await testApp({ overSocket: true, clock, env: { OLDEST_VERSION_SUNSET_AT: '2027-03-01T00:00:00Z' } });
    // The pet in memory first, so that its answer is the one memory holds.
    await t.request({ url: '/pets/1', headers: as(await t.newKey('pro')) });
    const statuses = new Set<number>();
    for (let early = 1; early <= 40; early++) {
      const pinned = (await t.keys.create({ plan: 'pro', apiVersion: OLDEST_VERSION })).key;
      clock.set(new Date(Date.parse('2027-03-01T00:00:00Z') - early).toISOString());
      ticking = true;
      const response = await t.request({ url: '/pets/1', headers: as(pinned) });
      ticking = false;
      statuses.add(response.statusCode);
      expect([200, 410], `${early} ms early`).toContain(response.statusCode);
      expect(Number(response.headers['x-ratelimit-remaining']), `${early} ms early`).toBe(
        Number(response.headers['x-ratelimit-limit']) - 1,
      );
    }
    expect([...statuses].sort()).toEqual([200, 410]);
  });
});

describe('GET /versions', () => {
  it('lists every version, oldest first, with its changes and the sunset of the deprecated one; no key, nothing counted', async () => {
    t = await testApp();
    const response = await t.request({ url: '/versions' });
    expect(response.statusCode).toBe(200);
    const { data } = body(response);
    expect(data.map((v: { version: string }) => v.version)).toEqual([...VERSIONS]);
    expect(data[0]).toEqual({
      version: OLDEST_VERSION,
      status: 'deprecated',
      sunsetAt: '2027-07-01T00:00:00.000Z',
      changes: [],
    });
    expect(data.at(-1)).toMatchObject({ version: NEWEST_VERSION, status: 'current' });
    expect(data.at(-1).changes.length).toBeGreaterThanOrEqual(2);
    expect(response.headers['x-ratelimit-remaining']).toBe(response.headers['x-ratelimit-limit']);
    const page = await t.request({ url: '/docs/versions' });
    expect(page.statusCode).toBe(200);
    for (const version of VERSIONS) expect(page.body).toContain(version);
  });
});

describe('a key’s pinned version', () => {
  it('is set at creation (the newest by default) and changed from the key’s next request on', async () => {
    t = await testApp({ env: { ADMIN_TOKEN: 'admin-token-for-tests-0123456789' } });
    const { record, key } = await t.keys.create({ plan: 'pro' });
    expect(record.apiVersion).toBe(NEWEST_VERSION);
    await expect(t.keys.create({ plan: 'pro', apiVersion: '2020-01-01' })).rejects.toThrow(/unknown version/);
    expect((await t.request({ url: '/pets/1', headers: as(key) })).headers['petstore-version']).toBe(NEWEST_VERSION);
    const admin = { authorization: 'Bearer admin-token-for-tests-0123456789', 'content-type': 'application/json' };
    const moved = await t.admin.inject({
      method: 'PUT',
      url: `/admin/keys/${record.id}/version`,
      headers: admin,
      payload: { apiVersion: OLDEST_VERSION },
    });
    expect(moved.statusCode).toBe(200);
    expect(body(moved).apiVersion).toBe(OLDEST_VERSION);
    expect((await t.request({ url: '/pets/1', headers: as(key) })).headers['petstore-version']).toBe(OLDEST_VERSION);
    const refused = await t.admin.inject({
      method: 'PUT',
      url: `/admin/keys/${record.id}/version`,
      headers: admin,
      payload: { apiVersion: 'latest' },
    });
    expect(refused.statusCode).toBe(400);
    const made = await t.admin.inject({
      method: 'POST',
      url: '/admin/keys',
      headers: admin,
      payload: { plan: 'free', apiVersion: OLDEST_VERSION },
    });
    expect(body(made)).toMatchObject({ apiVersion: OLDEST_VERSION });
  });
});
