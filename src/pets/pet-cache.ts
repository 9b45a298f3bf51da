import type { Clock } from '../clock.js';
import type { ChangeFeed } from '../db/change-feed.js';
import { RowCache } from '../db/row-cache.js';
import type { PetsRepository } from './repository.js';
import type { Pet } from './schemas.js';

/**
 * The catalogue's pets by id, from memory: `GET /pets/{petId}` touches no store. Forgotten on the same
 * notices as keys (db/change-feed.ts): the catalogue changes rarely, and only by the operator.
 */
export class PetCache {
  readonly #rows: RowCache<number, Pet>;

  constructor(pets: PetsRepository, { feed, clock, max }: { feed: ChangeFeed; clock: Clock; max: number }) {
    this.#rows = new RowCache({
      table: 'pets',
      max,
      feed,
      clock,
      load: (id) => pets.find(id),
      idOf: (pet) => String(pet.id),
    });
  }

  /** A pet is only read after the request's key was found, which asked the feed for news already. */
  find(id: number): Pet | undefined | Promise<Pet | undefined> {
    return this.#rows.get(id);
  }

  /** The pet if memory holds it, else undefined: nothing is read. */
  cached(id: number): Pet | undefined {
    return this.#rows.cached(id);
  }
}
