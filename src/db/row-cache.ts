import type { Clock } from '../clock.js';
import type { CachedTable, ChangeFeed } from './change-feed.js';

export interface RowCacheOptions<K, V> {
  table: CachedTable;
  /** The most rows held; the least recently used leaves first. */
  max: number;
  feed: ChangeFeed;
  clock: Clock;
  /** Reads a row from the store; `undefined` (no such row) is never cached. */
  load: (key: K) => Promise<V | undefined>;
  /** The id of the row behind a value: what change notifications name. */
  idOf: (value: V) => string;
}

interface Entry<K, V> {
  key: K;
  value: V;
  readAt: number;
  /** Neighbours in the order of use: `older` toward the least recently used. */
  older: Entry<K, V> | null;
  newer: Entry<K, V> | null;
}

/**
 * Rows of one table held in memory, read through to the store, forgotten as soon as the change feed
 * says they changed. Absent rows are not cached, so a new row is seen at once and a flood of lookups
 * of rows that do not exist fills nothing. Concurrent reads of one missing key share one load.
 */
export class RowCache<K, V> {
  readonly #entries = new Map<K, Entry<K, V>>();
  /**
   * The order of use, least recent first. A read moves its entry here, not in the Map: V8 marks a
   * Map's deleted entry and rebuilds the whole table once such marks fill it: with each read a delete
   * and a set, a large cache stalled for a whole rebuild every so many reads.
   */
  #leastRecent: Entry<K, V> | null = null;
  #mostRecent: Entry<K, V> | null = null;
  readonly #keyOfId = new Map<string, K>();
  readonly #loading = new Map<K, Promise<V | undefined>>();
  readonly #options: RowCacheOptions<K, V>;
  /** Raised by every change heard: a load that began before a change may not store what it read. */
  #generation = 0;

  constructor(options: RowCacheOptions<K, V>) {
    this.#options = options;
    options.feed.subscribe((change) => {
      this.#generation++;
      if (change.table === null) this.clear();
      else if (change.table === options.table) this.#forget(change.id);
    });
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The row, from memory when it may be trusted (synchronously), else from the store. The caller has
   * asked the feed to `check()` during this request.
   */
  get(key: K): V | undefined | Promise<V | undefined> {
    return this.cached(key) ?? this.#loading.get(key) ?? this.#load(key);
  }

  /** The row when memory holds it and may be trusted, else undefined: nothing is read from the store. */
  cached(key: K): V | undefined {
    const { feed, clock } = this.#options;
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (!feed.trusts(entry.readAt, clock())) {
      this.#remove(entry);
      return undefined;
    }
    this.#unlink(entry);
    this.#append(entry);
    return entry.value;
  }

  clear(): void {
    this.#entries.clear();
    this.#keyOfId.clear();
    this.#leastRecent = this.#mostRecent = null;
  }

  async #load(key: K): Promise<V | undefined> {
    const { load, clock } = this.#options;
    const generation = this.#generation;
    const readAt = clock();
    const loading = load(key);
    this.#loading.set(key, loading);
    try {
      const value = await loading;
      if (value !== undefined && generation === this.#generation) this.#store(key, value, readAt);
      return value;
    } finally {
      this.#loading.delete(key);
    }
  }

  #store(key: K, value: V, readAt: number): void {
    const { max, idOf } = this.#options;
    const stale = this.#entries.get(key);
    if (stale) this.#remove(stale);
    while (this.#entries.size >= max && this.#leastRecent) this.#remove(this.#leastRecent);
    const entry: Entry<K, V> = { key, value, readAt, older: null, newer: null };
    this.#entries.set(key, entry);
    this.#append(entry);
    this.#keyOfId.set(idOf(value), key);
  }

  #forget(id: string): void {
    const key = this.#keyOfId.get(id);
    const entry = key === undefined ? undefined : this.#entries.get(key);
    if (entry) this.#remove(entry);
  }

  #remove(entry: Entry<K, V>): void {
    this.#unlink(entry);
    this.#entries.delete(entry.key);
    if (this.#keyOfId.get(this.#options.idOf(entry.value)) === entry.key)
      this.#keyOfId.delete(this.#options.idOf(entry.value));
  }

  /** Makes `entry`, held in no order, the most recently used. */
  #append(entry: Entry<K, V>): void {
    entry.older = this.#mostRecent;
    entry.newer = null;
    if (this.#mostRecent) this.#mostRecent.newer = entry;
    else this.#leastRecent = entry;
    this.#mostRecent = entry;
  }

  /** Takes `entry` out of the order of use. */
  #unlink(entry: Entry<K, V>): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.#leastRecent = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.#mostRecent = entry.older;
    entry.older = entry.newer = null;
  }
}
