import type { Card } from './card.js';
import { newCard } from './card.js';

/**
 * Where the report cards are kept (docs/testing-clients.md#is-my-client-a-good-api-citizen): in this process's memory
 * on the embedded store, in Redis where instances share the limits, so that two instances answering one key grade it as
 * one would. A change is a function of the card and of how many requests of the key are under way (the
 * in-flight allowance), applied atomically. Only test keys have cards: a live key never reaches here.
 */
export interface Cards {
  /** A request of the key is under way: counted until its change (`update` with `done`). */
  arrived(keyId: string): void;
  /**
   * Applies `change` to the key's card (a new one from `since` if it has none) with the number of its
   * requests under way, this one included when `done`, which then ends it.
   */
  update(
    keyId: string,
    since: number,
    change: (card: Card, underWay: number) => void,
    done?: boolean,
  ): void | Promise<void>;
  read(keyId: string): Card | undefined | Promise<Card | undefined>;
  /** Starts the key's card over from `since`; its requests under way stay counted. */
  clear(keyId: string, since: number): Card | Promise<Card>;
  close(): Promise<void>;
}

/** The cards of this process: exact where one process answers every request (the embedded store). */
export class MemoryCards implements Cards {
  readonly #cards = new Map<string, { card?: Card; underWay: number }>();
  readonly #max: number;

  /** `max` cards at most: the least recently used goes first, as a limit's state would. */
  constructor(max = 10_000) {
    this.#max = max;
  }

  arrived(keyId: string): void {
    // Not made the most recent here: its change, which follows, does that.
    const entry = this.#cards.get(keyId);
    if (entry) entry.underWay++;
    else this.#entry(keyId).underWay++;
  }

  update(keyId: string, since: number, change: (card: Card, underWay: number) => void, done = false): void {
    const entry = this.#entry(keyId);
    change((entry.card ??= newCard(since)), entry.underWay);
    if (done && entry.underWay > 0) entry.underWay--;
  }

  read(keyId: string): Card | undefined {
    return this.#cards.get(keyId)?.card;
  }

  clear(keyId: string, since: number): Card {
    const entry = this.#entry(keyId);
    return (entry.card = newCard(since));
  }

  async close(): Promise<void> {}

  #entry(keyId: string): { card?: Card; underWay: number } {
    let entry = this.#cards.get(keyId);
    if (entry) {
      this.#cards.delete(keyId); // most recently used last
    } else {
      entry = { underWay: 0 };
      if (this.#cards.size >= this.#max) this.#cards.delete(this.#cards.keys().next().value!);
    }
    this.#cards.set(keyId, entry);
    return entry;
  }
}
