import type { Clock } from '../clock.js';
import type { Owner } from '../keys/identify.js';
import { callerNow } from '../clock.js';
import { toUtcDateTime } from '../http/date-time.js';
import { ProblemError } from '../http/problems.js';
import { fingerprintOf, type IdempotentWrites } from '../idempotency/writes.js';
import type { PetCache } from '../pets/pet-cache.js';
import type { OrderMoves, Placing } from './moves.js';
import type { NewOrder, Order } from './schemas.js';
import type { Pet } from '../pets/schemas.js';
import { TurnBatch } from '../turn-batch.js';

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

  /** Places an order for `owner`, at its now (a test key's clock's: test-mode/). */
  async place(owner: Owner, input: NewOrder, idempotencyKey?: string): Promise<Placed> {
    if (idempotencyKey === undefined) return { order: await this.#placeWithOthers(owner, input), replayed: false };
    const placed = await this.writes.run(
      owner,
      idempotencyKey,
      () => fingerprintOf('placeOrder', input),
      async (trx, pet) => {
        placeable(input, pet);
        const now = callerNow(owner.clock, this.clock());
        const order = await this.moves.place(trx, owner.id, fieldsOf(input, now), now);
        return { status: 201, body: order, orderId: order.id };
      },
      // Read before the transaction: on SQLite it holds the only connection, which a catalogue miss needs.
      () => this.catalogue.find(input.petId),
    );
    if (!placed.replayed) await this.moves.moved([{ owner: owner.id, order: placed.body }]);
    return { order: placed.body, replayed: placed.replayed };
  }

  /**
   * An order without an idempotency key, placed with the others of its turn in one statement
   * (`OrderMoves.placeAll`): under load, one insert and one commit for many orders. Should the batch
   * fail (a pet removed from the catalogue meanwhile), each of its orders is placed alone, so that
   * only the one that cannot be placed fails.
   */
  async #placeWithOthers({ id: owner, clock }: Owner, input: NewOrder): Promise<Order> {
    placeable(input, await this.catalogue.find(input.petId));
    const now = callerNow(clock, this.clock());
    const order = await new Promise<Order>((resolve, reject) =>
      this.#placing.add({ owner, fields: fieldsOf(input, now), now, resolve, reject }),
    );
    await this.moves.moved([{ owner, order }]);
    return order;
  }

  readonly #placing = new TurnBatch<Placing & { resolve(order: Order): void; reject(error: unknown): void }>(
    async (batch) => {
      try {
        const orders = await this.moves.placeAll(batch);
        batch.forEach((placing, i) => placing.resolve(orders[i]!));
      } catch {
        await Promise.all(
          batch.map((placing) =>
            this.moves.placeAll([placing]).then(([order]) => placing.resolve(order!), placing.reject),
          ),
        );
      }
    },
  );
}

/** Throws the problem that refuses an order for `pet`, if one does. */
function placeable(input: NewOrder, pet: Pet | undefined): void {
  if (!pet) throw new ProblemError('not-found', `There is no pet ${input.petId}.`);
  if (pet.status !== 'available')
    throw new ProblemError('pet-not-available', `Pet ${input.petId} is ${pet.status}, not available.`);
}

/** The order's fields as placed at `now`: a quantity of 1, and shipping two days later, unless it says otherwise. */
function fieldsOf(input: NewOrder, now: number): Placing['fields'] {
  return {
    petId: input.petId,
    quantity: input.quantity ?? 1,
    // Validation accepted only date-times that convert (http/date-time.ts).
    shipDate: input.shipDate ? toUtcDateTime(input.shipDate)! : new Date(now + DEFAULT_SHIP_DELAY_MS).toISOString(),
  };
}
