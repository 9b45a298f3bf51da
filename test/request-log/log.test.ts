/**
 * A test key's request log (request-log/, docs/request-log.md): every counted API request of the key recorded as it
 * happened, newest first, filtered and paged; nothing of a live key's; the oldest beyond 1,000 dropped; emptied by a
 * reset; one key's entries invisible to another.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { TEST_STORE } from '../helpers/database.js';

let t: TestApp;
afterEach(async () => t?.close());

const as = (key: string, more: Record<string, string> = {}) => ({
  'x-api-key': key,
  'petstore-version': NEWEST_VERSION,
  ...more,
});
const logOf = async (key: string, query = '') =>
  json(await t.request({ url: `/request-log${query}`, headers: as(key) }));

describe('the request log', () => {
  it("records a test key's counted requests as they happened, newest first; the log's own reads, none", async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'free', test: true });
    await t.request({ url: '/pets/1', headers: as(key, { 'x-request-id': 'read-1' }) });
    await t.request({ url: '/report-card', headers: as(key) });
    const placed = await t.request({
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'x-request-id': 'order-1', 'idempotency-key': 'o-1', 'content-type': 'application/json' }),
      // Kept as sent, byte for byte.
      payload: '{ "petId": 1,\n  "quantity": 2 }',
    });
    expect(placed.statusCode).toBe(201);
    await t.request({ url: '/pets/nope', headers: as(key, { 'x-request-id': 'bad-1' }) });
    const { data, nextCursor } = await logOf(key);
    expect(nextCursor).toBeNull();
    expect(data.map((entry: { requestId: string }) => entry.requestId)).toEqual(['bad-1', 'order-1', 'read-1']);
    const [bad, order, read] = data;
    expect(read).toMatchObject({
      method: 'GET',
      url: '/pets/1',
      path: '/pets/{petId}',
      status: 200,
      ending: 'answered',
      at: new Date(t.clock()).toISOString(),
      receivedAt: new Date(t.clock()).toISOString(),
      requestHeaders: { 'x-api-key': `${key.slice(0, 8)}…`, 'petstore-version': NEWEST_VERSION },
      responseHeaders: { 'x-ratelimit-remaining': '59', etag: expect.any(String) },
      checks: [{ id: 'pins-version', outcome: 'passed' }],
    });
    expect(JSON.parse(read.responseBody)).toMatchObject({ id: 1 });
    expect(read).not.toHaveProperty('requestBody');
    expect(order).toMatchObject({ method: 'POST', status: 201, path: '/store/orders' });
    expect(order.requestBody).toBe('{ "petId": 1,\n  "quantity": 2 }');
    expect(bad).toMatchObject({ status: 400 });
    expect(json(await t.request({ url: '/request-log/order-1', headers: as(key) }))).toEqual(order);
  });

  it('names what a fault injected and by what, and what each request did to the card', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'free', test: true });
    await t.request({ url: '/pets/1', headers: as(key, { prefer: 'fault=503', 'x-request-id': 'f-1' }) });
    await t.request({
      method: 'PUT',
      url: '/test-scenario',
      headers: as(key),
      payload: { steps: [{ match: 'GET /pets/{petId}', answer: '500' }] },
    });
    await t.request({ url: '/pets/1', headers: { 'x-api-key': key, 'x-request-id': 's-1' } });
    const entry = (id: string) => t.request({ url: `/request-log/${id}`, headers: as(key) }).then(json);
    expect(await entry('f-1')).toMatchObject({
      status: 503,
      fault: { fault: '503', by: 'Prefer: fault=503' },
      checks: [
        { id: 'honours-retry-after', outcome: 'started' },
        { id: 'pins-version', outcome: 'passed' },
      ],
    });
    const stepped = await entry('s-1');
    expect(stepped).toMatchObject({ status: 500, fault: { fault: '500', by: 'step 0 of its script' } });
    expect(stepped.checks).toContainEqual({
      id: 'pins-version',
      outcome: 'failed',
      detail: 'GET /pets/1 carried no Petstore-Version',
    });
    const failed = json(await t.request({ url: '/request-log?check=pins-version&status=5xx', headers: as(key) }));
    expect(failed.data.map((e: { requestId: string }) => e.requestId)).toEqual(['s-1', 'f-1']);
  });

  it('links every failure on the card to its exchange, while the log holds it', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'free', test: true });
    await t.request({ url: '/pets/1', headers: { 'x-api-key': key, 'x-request-id': 'unpinned-1' } });
    const card = async () => json(await t.request({ url: '/report-card', headers: as(key) }));
    const pins = (await card()).checks.find((check: { id: string }) => check.id === 'pins-version');
    expect(pins.failures).toEqual([
      expect.objectContaining({ requestId: 'unpinned-1', log: 'http://petstore.test/request-log/unpinned-1' }),
    ]);
    const entry = json(await t.request({ url: new URL(pins.failures[0].log).pathname, headers: as(key) }));
    expect(entry).toMatchObject({ requestId: 'unpinned-1', checks: [{ id: 'pins-version', outcome: 'failed' }] });
    // The card keeps its failures; the log, emptied, no longer holds the exchange.
    await t.request({ method: 'DELETE', url: '/test-data', headers: as(key) });
    const after = (await card()).checks.find((check: { id: string }) => check.id === 'pins-version');
    expect(after.failures).toEqual([expect.objectContaining({ requestId: 'unpinned-1', log: null })]);
  });

  it('keeps nothing of a live key, and is a 403 for one; another key’s entry is a 404', async () => {
    t = await testApp();
    const live = await t.newKey('free');
    const key = await t.newKey({ plan: 'free', test: true });
    const other = await t.newKey({ plan: 'free', test: true });
    await t.request({ url: '/pets/1', headers: as(live, { 'x-request-id': 'live-1' }) });
    await t.request({ url: '/pets/1', headers: as(key, { 'x-request-id': 'mine-1' }) });
    for (const url of ['/request-log', '/request-log/live-1', '/request-log.har'])
      expect((await t.request({ url, headers: as(live) })).statusCode).toBe(403);
    expect((await t.request({ url: '/request-log/mine-1', headers: as(other) })).statusCode).toBe(404);
    expect((await logOf(other)).data).toEqual([]);
    // What the store holds (the embedded store's log is in memory, and the stage that fills it is the same).
    if (TEST_STORE === 'postgres') {
      const rows = await t.db.selectFrom('request_log').select('request_id').execute();
      expect(rows.map((row) => row.request_id)).toEqual(['mine-1']);
    }
  });

  it('keeps the latest 1,000 exchanges of a key, pages them, and is emptied by a reset', async () => {
    t = await testApp();
    const key = await t.newKey({ plan: 'enterprise', perMinute: 100_000, perDay: 1_000_000, test: true });
    for (let i = 0; i < 1100; i++) {
      await t.request({ url: '/pets/1', headers: as(key, { 'x-request-id': `r-${i}` }) });
      if (i % 100 === 99) t.clock.advance(1);
    }
    const seen: string[] = [];
    for (let cursor: string | null = ''; cursor !== null;) {
      const page = await logOf(key, `?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.data.map((entry: { requestId: string }) => entry.requestId));
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(1000);
    expect(seen[0]).toBe('r-1099');
    expect(seen.at(-1)).toBe('r-100');
    expect(new Set(seen).size).toBe(1000);
    // A cursor for another selection is refused.
    const first = await logOf(key, '?limit=1');
    expect(
      (await t.request({ url: `/request-log?status=200&cursor=${first.nextCursor}`, headers: as(key) })).statusCode,
    ).toBe(400);
    await t.request({ method: 'DELETE', url: '/test-data', headers: as(key) });
    expect((await logOf(key)).data).toEqual([]);
  });
});

describe('how an exchange ended', () => {
  it('records a request the client cut before its answer as cut, with no status', async () => {
    t = await testApp({ overSocket: true });
    const key = await t.newKey({ plan: 'free', test: true });
    await t.request({
      method: 'PUT',
      url: '/test-scenario',
      headers: as(key),
      payload: { steps: [{ match: 'GET /pets/{petId}', answer: 'pass', latencyMs: 2_000 }] },
    });
    const controller = new AbortController();
    const port = (t.app.server.address() as { port: number }).port;
    const sent = fetch(`http://127.0.0.1:${port}/pets/1`, {
      headers: as(key, { 'x-request-id': 'cut-1' }),
      signal: controller.signal,
    }).catch(() => undefined);
    // The step holds the answer two seconds: the client gives up once the request has arrived.
    while ((json(await t.request({ url: '/test-scenario', headers: as(key) })).used ?? []).length === 0)
      await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    await sent;
    let entry = await t.request({ url: '/request-log/cut-1', headers: as(key) });
    while (entry.statusCode === 404) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      entry = await t.request({ url: '/request-log/cut-1', headers: as(key) });
    }
    expect(json(entry)).toMatchObject({ requestId: 'cut-1', status: null, ending: 'cut', responseHeaders: {} });
  });

  it("names a fault drawn by the key's profile as its cause", async () => {
    t = await testApp();
    const { key } = await t.keys.create({
      plan: 'free',
      test: true,
      faults: { rate: 1, faults: ['500'], latencyMs: null, seed: 7 },
    });
    await t.request({ url: '/pets/1', headers: as(key, { 'x-request-id': 'drawn-1' }) });
    const entry = json(await t.request({ url: '/request-log/drawn-1', headers: as(key) }));
    expect(entry).toMatchObject({ status: 500, fault: { fault: '500', by: expect.stringContaining('profile') } });
  });
});
