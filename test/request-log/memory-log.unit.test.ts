import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/request-log/exchange.js';
import { MemoryRequestLog } from '../../src/request-log/log.js';

/** The embedded store's request logs (src/request-log/log.ts): each key's newest, and a budget over all keys. */

const exchange = (requestId: string, real: number, body = ''): Exchange => ({
  requestId,
  real,
  key: real,
  method: 'GET',
  url: '/pets/1',
  path: '/pets/{petId}',
  requestHeaders: { 'x-api-key': 'pet_test_abcdefghijklmnopqrstuvwxyz012345' },
  requestBody: undefined,
  status: 200,
  responseHeaders: {},
  responseBody: body || undefined,
  ms: 1,
  ending: 'answered',
  fault: undefined,
  checks: [],
});

describe('the request logs in memory', () => {
  it("keep each key's newest entries, newest first, made entries (credentials cut) when read", async () => {
    const log = new MemoryRequestLog(3);
    for (let i = 0; i < 5; i++) log.record('key_a', exchange(`a-${i}`, 1_000 + i));
    const page = await log.page('key_a', {}, 10);
    expect(page.entries.map((entry) => entry.requestId)).toEqual(['a-4', 'a-3', 'a-2']);
    expect(page.entries[0]!.requestHeaders['x-api-key']).toBe('pet_test…');
    expect(await log.entry('key_a', 'a-1')).toBeUndefined();
    expect(await log.kept('key_a', ['a-1', 'a-3'])).toEqual(new Set(['a-3']));
  });

  it('drop the logs of the keys that recorded least recently, whole, past their budget', async () => {
    // Each exchange about 2.5 KB (./exchange.ts sizeOf) plus its body: room for about eight.
    const log = new MemoryRequestLog(1_000, 8 * 2_600);
    for (let i = 0; i < 4; i++) log.record('key_old', exchange(`o-${i}`, i, 'x'.repeat(50)));
    for (let i = 0; i < 4; i++) log.record('key_new', exchange(`n-${i}`, 10 + i, 'x'.repeat(50)));
    log.record('key_old', exchange('o-4', 20, 'x'.repeat(50)));
    // key_old recorded last: key_new is the least recent, and goes whole when the budget is passed.
    log.record('key_third', exchange('t-0', 30, 'x'.repeat(50)));
    expect((await log.page('key_new', {}, 10)).entries).toEqual([]);
    expect((await log.page('key_old', {}, 10)).entries).toHaveLength(5);
    expect((await log.page('key_third', {}, 10)).entries).toHaveLength(1);
  });
});
