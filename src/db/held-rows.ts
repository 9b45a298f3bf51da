import type { ChangeFeed, CachedTable } from './change-feed.js';

/** The most rows held of one table; the oldest read leaves first. */
const MAX_HELD = 10_000;

/**
 * Rows of one table held in memory, by id, where the store tells this process of every change before its next
 * request (the embedded store: db/change-feed.ts `immediate`); elsewhere nothing is held and every read goes to
 * the store. A change to a row forgets it; a read that began before any change was heard is not held, so that a
 * row is never held as it stood before a change.
 */
export class HeldRows<T> {
  readonly #held = new Map<string, T>();
  readonly #holds: boolean;
  /** Raised by every change heard. */
  #generation = 0;

  constructor(table: CachedTable, changes: Pick<ChangeFeed, 'immediate' | 'subscribe'>) {
    this.#holds = changes.immediate;
    changes.subscribe((change) => {
      this.#generation++;
      if (change.table === null) this.#held.clear();
      else if (change.table === table) this.#held.delete(change.id);
    });
  }

  /** The row held for `id`, if any. */
  get(id: string): T | undefined {
    return this.#holds ? this.#held.get(id) : undefined;
  }

  /** The row as `read` reads it from the store, held when no change was heard meanwhile. */
  async read(id: string, read: () => Promise<T>): Promise<T> {
    const generation = this.#generation;
    const row = await read();
    if (this.#holds && generation === this.#generation) {
      if (this.#held.size >= MAX_HELD) this.#held.delete(this.#held.keys().next().value!);
      this.#held.set(id, row);
    }
    return row;
  }
}
