import { describe, expect, it, vi } from 'vitest';
import type { Change, ChangeFeed } from '../../src/db/change-feed.js';
import { RowCache } from '../../src/db/row-cache.js';

/** A cache of max 3 rows over a store that answers every key, with the change feed in the test's hands. */
function cache() {
  let listener: (change: Change) => void = () => {};
  const feed = {
    subscribe: (l: (change: Change) => void) => void (listener = l),
    trusts: () => true,
  } as unknown as ChangeFeed;
  const load = vi.fn(async (key: string) => ({ id: `id_${key}` }));
  const rows = new RowCache<string, { id: string }>({
    table: 'api_keys',
    max: 3,
    feed,
    clock: () => 0,
    load,
    idOf: (row) => row.id,
  });
  /** The keys held now, by whether reading them loads nothing. */
  const held = (keys: string[]) => keys.filter((key) => rows.cached(key) !== undefined);
  return { rows, load, held, change: (change: Change) => listener(change) };
}

describe('RowCache: the order of use', () => {
  it('evicts the least recently used, reads count as use, and a forgotten or cleared row leaves the order whole', async () => {
    const { rows, held, change } = cache();
    for (const key of ['a', 'b', 'c']) await rows.get(key);
    rows.cached('a');
    change({ table: 'api_keys', id: 'id_b' }); // forgotten from the middle
    await rows.get('d');
    await rows.get('e'); // full: c, the least recently used, leaves
    expect(rows.size).toBe(3);
    expect(held(['a', 'b', 'c', 'd', 'e'])).toEqual(['a', 'd', 'e']);
    change({ table: null, id: null });
    expect(rows.size).toBe(0);
    for (const key of ['w', 'x', 'y', 'z']) await rows.get(key);
    expect(held(['w', 'x', 'y', 'z'])).toEqual(['x', 'y', 'z']);
  });
});
