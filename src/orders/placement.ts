import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { ChangeFeed } from '../db/change-feed.js';
import type { Db } from '../db/database.js';
import { type Transactions, transactionsOf } from '../db/group-commit.js';
import { isUniqueViolation } from '../db/errors.js';
import { toUtcDateTime } from '../http/date-time.js';
import { ProblemError } from '../http/problems.js';
import type { PetCache } from '../pets/pet-cache.js';
import type { Pet } from '../pets/schemas.js';
import { IDEMPOTENCY_WINDOW_IN_WORDS, IDEMPOTENCY_WINDOW_MS } from './idempotency-window.js';
import { OrdersRepository } from './repository.js';
import type { NewOrder, Order } from './schemas.js';

const DEFAULT_SHIP_DELAY_MS = 2 * 24 * 60 * 60 * 1000;

export interface Placed {
  order: Order;
  /** True when this is the replay of an earlier request with the same idempotency key. */
  replayed: boolean;
}

/**
 * Placing an order. With an idempotency key, the order and the record of the key are written in one
 * transaction, so a crash leaves either both or neither; the same key and body within
 * `IDEMPOTENCY_WINDOW_MS` get the original response, the same key with another body a `422`. Only
 * successes are remembered: a request refused with `404` or `409` may be retried with the same key
 * once the pet is available.
 */
export class OrderPlacement {
  /** Orders placed together commit together on the embedded store (../db/group-commit.ts). */
  readonly #transactions: Transactions;

  constructor(
    db: Db,
    private readonly clock: Clock,
    /** The catalogue, from memory (pets/pet-cache.ts): an order does not reserve its pet. */
    private readonly catalogue: Pick<PetCache, 'find'>,
    /** Told of every order placed (./repository.ts). */
    private readonly changes?: Pick<ChangeFeed, 'changed'>,
  ) {
    this.#transactions = transactionsOf(db);
  }

  /** The idempotency keys of requests this process is placing now, by owner. */
  readonly #inProgress = new Set<string>();

  async place(owner: string, input: NewOrder, idempotencyKey?: string): Promise<Placed> {
    if (idempotencyKey === undefined) return this.#place(owner, input);
    // A retry while the original is still being processed here gets a 409 (draft-ietf-httpapi-
    // idempotency-key-header). Across instances the store's unique index makes it wait and replay.
    const slot = `${owner}\u0000${idempotencyKey}`;
    if (this.#inProgress.has(slot))
      throw new ProblemError('idempotency-key-in-progress', 'A request with this Idempotency-Key is still being processed; retry in a moment.');
    this.#inProgress.add(slot);
    try {
      return await this.#place(owner, input, idempotencyKey);
    } finally {
      this.#inProgress.delete(slot);
    }
  }

  async #place(owner: string, input: NewOrder, idempotencyKey?: string): Promise<Placed> {
    // Read before the transaction: on SQLite it holds the only connection, which a catalogue miss needs.
    const pet = await this.catalogue.find(input.petId);
    try {
      return await this.#transactions.run((trx) => this.placeIn(trx, owner, input, pet, idempotencyKey));
    } catch (error) {
      // Two requests with the same new key raced (on two instances); the loser replays the winner's response.
      if (idempotencyKey && isUniqueViolation(error)) return this.#transactions.run((trx) => this.placeIn(trx, owner, input, pet, idempotencyKey));
      throw error;
    }
  }

  private async placeIn(trx: Db, owner: string, input: NewOrder, pet: Pet | undefined, idempotencyKey?: string): Promise<Placed> {
    const now = this.clock();
    // Only a request with an idempotency key is remembered, with its body's hash.
    const remembered = idempotencyKey ? { key: idempotencyKey, hash: requestHash(input) } : undefined;
    if (remembered) {
      const earlier = await trx
        .selectFrom('idempotency_records')
        .selectAll()
        .where('api_key_id', '=', owner)
        .where('idempotency_key', '=', remembered.key)
        .executeTakeFirst();
      if (earlier && Date.parse(earlier.created_at) > now - IDEMPOTENCY_WINDOW_MS) {
        if (earlier.request_hash !== remembered.hash) {
          throw new ProblemError(
            'idempotency-key-reused',
            `This Idempotency-Key was used with another request body in the last ${IDEMPOTENCY_WINDOW_IN_WORDS}.`,
          );
        }
        return { order: JSON.parse(earlier.response_body) as Order, replayed: true };
      }
      if (earlier) {
        await trx.deleteFrom('idempotency_records').where('api_key_id', '=', owner).where('idempotency_key', '=', remembered.key).execute();
      }
    }
    if (!pet) throw new ProblemError('not-found', `There is no pet ${input.petId}.`);
    if (pet.status !== 'available') throw new ProblemError('pet-not-available', `Pet ${input.petId} is ${pet.status}, not available.`);

    const order = await new OrdersRepository(trx, this.changes).create(
      owner,
      {
        petId: input.petId,
        quantity: input.quantity ?? 1,
        // Validation accepted only date-times that convert (http/date-time.ts).
        shipDate: input.shipDate ? toUtcDateTime(input.shipDate)! : new Date(now + DEFAULT_SHIP_DELAY_MS).toISOString(),
        status: 'placed',
        complete: false,
      },
      new Date(now).toISOString(),
    );
    if (remembered) {
      await trx
        .insertInto('idempotency_records')
        .values({
          api_key_id: owner,
          idempotency_key: remembered.key,
          request_hash: remembered.hash,
          order_id: order.id,
          response_body: JSON.stringify(order),
          created_at: new Date(now).toISOString(),
        })
        .execute();
    }
    return { order, replayed: false };
  }
}

/** The body as the client meant it: member order and white space do not make another request. */
function requestHash(input: NewOrder): string {
  const canonical = JSON.stringify(
    Object.keys(input)
      .sort()
      .map((k) => [k, input[k as keyof NewOrder]]),
  );
  return createHash('sha256').update(canonical).digest('hex');
}
