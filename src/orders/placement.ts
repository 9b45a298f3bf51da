import type { Clock } from '../clock.js';
import { toUtcDateTime } from '../http/date-time.js';
import { ProblemError } from '../http/problems.js';
import { fingerprintOf, type IdempotentWrites } from '../idempotency/writes.js';
import type { PetCache } from '../pets/pet-cache.js';
import type { OrderMoves } from './moves.js';
import type { NewOrder, Order } from './schemas.js';

const DEFAULT_SHIP_DELAY_MS = 2 * 24 * 60 * 60 * 1000;

export interface Placed {
  order: Order;
  /** True when this is the replay of an earlier request with the same idempotency key. */
  replayed: boolean;
}

/**
 * Placing an order: its row (with its `order.placed` event: ./moves.ts) and, with an idempotency key,
 * the response, in one transaction (idempotency/writes.ts).
 */
export class OrderPlacement {
  constructor(
    private readonly writes: IdempotentWrites,
    private readonly moves: OrderMoves,
    private readonly clock: Clock,
    /** The catalogue, from memory (pets/pet-cache.ts): an order does not reserve its pet. */
    private readonly catalogue: Pick<PetCache, 'find'>,
  ) {}

  async place(key: { id: string }, input: NewOrder, idempotencyKey?: string): Promise<Placed> {
    const placed = await this.writes.run(
      key.id,
      idempotencyKey,
      () => fingerprintOf('placeOrder', input),
      async (trx, pet) => {
        if (!pet) throw new ProblemError('not-found', `There is no pet ${input.petId}.`);
        if (pet.status !== 'available') throw new ProblemError('pet-not-available', `Pet ${input.petId} is ${pet.status}, not available.`);
        const now = this.clock();
        const order = await this.moves.place(
          trx,
          key.id,
          {
            petId: input.petId,
            quantity: input.quantity ?? 1,
            // Validation accepted only date-times that convert (http/date-time.ts).
            shipDate: input.shipDate ? toUtcDateTime(input.shipDate)! : new Date(now + DEFAULT_SHIP_DELAY_MS).toISOString(),
          },
          now,
        );
        return { status: 201, body: order, orderId: order.id };
      },
      // Read before the transaction: on SQLite it holds the only connection, which a catalogue miss needs.
      () => this.catalogue.find(input.petId),
    );
    if (!placed.replayed) this.moves.moved([placed.body]);
    return { order: placed.body, replayed: placed.replayed };
  }
}
