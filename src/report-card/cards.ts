import type { Card, CardChange } from './card.js';
import { newCard } from './card.js';
import { applyChange, type Outcome } from './grade.js';

/**
 * Where the report cards are kept (docs/testing-clients.md#is-my-client-a-good-api-citizen): in this process's memory
 * on the embedded store, in Redis where instances share the limits, so that two instances answering one key grade it as
 * one would. A change is data (./card.ts `CardChange`), applied in the order changes reach the store, each
 * exactly once, however many arrive at once and through however many instances. Only test keys have cards:
 * a live key never reaches here.
 */
export interface Cards {
  /**
   * Records `change` on the key's card (a new one from `since` if it has none), and answers a graded request's
   * outcomes (undefined when they could not be known). Once it has settled, the key's next change, on any instance,
   * comes after it.
   */
  record(keyId: string, since: number, change: CardChange): Outcome[] | undefined | Promise<Outcome[] | undefined>;
  /** The key's card, with every change recorded so far (a new one from `since` if it has none). */
  read(keyId: string, since: number): Card | Promise<Card>;
  /** Starts the key's card over from `since`. */
  clear(keyId: string, since: number): Card | Promise<Card>;
  close(): Promise<void>;
}

/** The cards of this process: exact where one process answers every request (the embedded store). */
export class MemoryCards implements Cards {
  readonly #cards = new Map<string, Card>();
  readonly #max: number;

  /** `max` cards at most: the least recently used goes first, as a limit's state would. */
  constructor(max = 10_000) {
    this.#max = max;
  }

  record(keyId: string, since: number, change: CardChange): Outcome[] | undefined {
    return applyChange(this.#card(keyId, since), change);
  }

  read(keyId: string, since: number): Card {
    return this.#cards.get(keyId) ?? newCard(since);
  }

  clear(keyId: string, since: number): Card {
    this.#cards.delete(keyId);
    return this.#card(keyId, since);
  }

  async close(): Promise<void> {}

  /** The key's card, made the most recently used; a new one from `since` if it has none. */
  #card(keyId: string, since: number): Card {
    let card = this.#cards.get(keyId);
    if (card) this.#cards.delete(keyId);
    else {
      card = newCard(since);
      if (this.#cards.size >= this.#max) this.#cards.delete(this.#cards.keys().next().value!);
    }
    this.#cards.set(keyId, card);
    return card;
  }
}
