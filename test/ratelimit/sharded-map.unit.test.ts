import { describe, expect, it } from 'vitest';
import { SHARDS, ShardedMap } from '../../src/ratelimit/sharded-map.js';

const address = (i: number) => `ip:127.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

describe('ShardedMap', () => {
  it('holds a name in one table, and spreads names over its tables', () => {
    const map = new ShardedMap<number>();
    for (let i = 0; i < 20_000; i++) map.tableOf(address(i)).set(address(i), i);
    expect(map.size).toBe(20_000);
    expect(map.tableOf(address(1234)).get(address(1234))).toBe(1234);
    // No table holds more than twice its share: no single Map grows large.
    const sizes = new Map<Map<string, number>, number>();
    for (let i = 0; i < 20_000; i++) sizes.set(map.tableOf(address(i)), map.tableOf(address(i)).size);
    expect(sizes.size).toBe(SHARDS);
    expect(Math.max(...sizes.values())).toBeLessThan((2 * 20_000) / SHARDS);
    map.clear();
    expect(map.size).toBe(0);
  });

  it('walks the entries held when asked: each once, the updated ones too, not the ones added or deleted since', () => {
    const map = new ShardedMap<number>();
    for (let i = 0; i < 1_000; i++) map.tableOf(address(i)).set(address(i), i);
    const held = map.held();
    const seen = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const next = held.next();
      expect(next.done).toBe(false);
      const [name] = next.value as [string, number];
      seen.add(name);
      // Meanwhile: an update, a newcomer, and a deletion of an entry already walked.
      map.tableOf(name).set(name, -1);
      map.tableOf(address(5_000 + i)).set(address(5_000 + i), i);
      if (i % 2 === 0) map.tableOf(name).delete(name);
    }
    expect(held.next().done).toBe(true);
    expect(seen.size).toBe(1_000);
    for (let i = 0; i < 1_000; i++) expect(seen.has(address(i))).toBe(true);
  });

  it('takes a power of two', () => {
    expect(() => new ShardedMap(3)).toThrow(RangeError);
    expect(() => new ShardedMap(0)).toThrow(RangeError);
    const one = new ShardedMap<number>(1);
    one.tableOf('b').set('b', 1);
    one.tableOf('a').set('a', 2);
    expect(one.tableOf('a')).toBe(one.tableOf('b'));
    expect([...{ [Symbol.iterator]: () => one.held() }]).toEqual([
      ['b', 1],
      ['a', 2],
    ]);
  });
});
