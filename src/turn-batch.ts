/**
 * Items gathered over one turn of the event loop and handed over together once the turn's I/O is
 * done (`setImmediate`): by then every request read in the turn has added what it will. What the
 * service does once per turn instead of once per item (a look at the store's news, a Redis round trip,
 * a transaction, a write of log lines) goes through here.
 *
 * When `handle` returns a promise, the next turn's items wait for it: one group at a time. `handle`
 * settles its items itself (a rejection of its promise is not an item's).
 */
export class TurnBatch<T> {
  #items: T[] = [];
  #scheduled = false;

  constructor(private readonly handle: (items: T[]) => void | Promise<void>) {}

  /** Gathers an item; the first of a turn schedules the hand-over. */
  add(item: T): void {
    this.#items.push(item);
    if (!this.#scheduled) this.#schedule();
  }

  /** Hands over what is gathered now, synchronously (for a `handle` that is itself synchronous). */
  flush(): void {
    this.#scheduled = false;
    void this.#handOver();
  }

  #schedule(): void {
    this.#scheduled = true;
    setImmediate(this.#run);
  }

  readonly #run = (): void => {
    if (!this.#scheduled) return;
    let done: void | Promise<void> = undefined;
    try {
      done = this.#handOver();
    } finally {
      // A `handle` that threw still leaves the batch taking the next turn's items.
      if (done === undefined) this.#next();
    }
    done?.then(this.#next, this.#next);
  };

  readonly #next = (): void => {
    this.#scheduled = false;
    if (this.#items.length > 0) this.#schedule();
  };

  #handOver(): void | Promise<void> {
    const items = this.#items;
    if (items.length === 0) return;
    this.#items = [];
    return this.handle(items);
  }
}
