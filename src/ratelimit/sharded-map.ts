import { randomInt } from 'node:crypto';

/** Tables of a `ShardedMap` by default: 200,000 callers make about 800 a table. */
export const SHARDS = 256;

/** Characters of a name hashed: the end of a name is what varies (an address's last bytes, a key's id). */
const HASHED_CHARS = 16;

/**
 * A Map by string, split into tables by a hash of the name. V8 rebuilds a Map's whole table when the
 * Map grows past a power of two, and when deletions leave it a quarter full: with hundreds of thousands
 * of callers in one Map, one such rebuild holds the event loop for milliseconds. Split, each table
 * holds a few hundred names and a rebuild takes microseconds. The hash is seeded per process, so that names chosen by a
 * client (its addresses) cannot be piled into one table.
 */
export class ShardedMap<V> {
  readonly #tables: Map<string, V>[];
  readonly #mask: number;
  readonly #seed = randomInt(2 ** 31);

  /** `shards`: a power of two; 1 keeps one Map (its insertion order: what some tests follow). */
  constructor(shards = SHARDS) {
    if (!Number.isInteger(shards) || shards < 1 || (shards & (shards - 1)) !== 0)
      throw new RangeError(`shards must be a power of two, not ${shards}`);
    this.#tables = Array.from({ length: shards }, () => new Map<string, V>());
    this.#mask = shards - 1;
  }

  /** The table that holds `name`, to get and set it with one hash. */
  tableOf(name: string): Map<string, V> {
    let h = this.#seed;
    for (let i = Math.max(0, name.length - HASHED_CHARS); i < name.length; i++)
      h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
    return this.#tables[(h ^ (h >>> 16)) & this.#mask]!;
  }

  get size(): number {
    let size = 0;
    for (const table of this.#tables) size += table.size;
    return size;
  }

  clear(): void {
    for (const table of this.#tables) table.clear();
  }

  /**
   * The entries held now, table after table, each in its insertion order: as many of each table's
   * first entries as it holds now. An entry updated meanwhile keeps its place; one added meanwhile
   * comes after them and is left out (unless entries were deleted meanwhile: then as many later ones).
   */
  held(): Iterator<[string, V]> {
    return entriesUpTo(
      this.#tables,
      this.#tables.map((table) => table.size),
    );
  }
}

function* entriesUpTo<V>(tables: Map<string, V>[], counts: number[]): Generator<[string, V]> {
  for (let t = 0; t < tables.length; t++) {
    let left = counts[t]!;
    if (left === 0) continue;
    for (const entry of tables[t]!) {
      yield entry;
      if (--left === 0) break;
    }
  }
}
