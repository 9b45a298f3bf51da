import type { Clock } from '../clock.js';
import type { Transactions } from '../db/group-commit.js';
import { type Pace, paced } from '../jobs/paced.js';
import { every, type Periodic } from '../jobs/periodic.js';
import type { OrderMoves } from './moves.js';

/** How often each instance looks for orders that fell due: a move happens within this of falling due, and the time to make it. */
export const FULFILMENT_INTERVAL_MS = 500;

/**
 * Fulfilment's share of the event loop while orders wait: slices of about 3 ms (SQLite holds the loop
 * for a whole slice; a machine under load stretches it), then a rest: as long again while the API is
 * idle, some thirty times as long while requests keep the loop busy (the store's own work beside it, the
 * checkpoints of its log, takes more). A flood of due orders falls behind
 * (the lag is in metrics) rather than slowing the API.
 */
export const FULFILMENT_PACE: Pace = { sliceMs: 3, idleShare: 0.5, busyShare: 0.03, first: 100, min: 10, max: 1_000 };

export interface FulfilmentDeps {
  moves: OrderMoves;
  transactions: Transactions;
  clock: Clock;
  /** How late the oldest due order was when last taken, in seconds; 0 when none was waiting. */
  lag: { set(seconds: number): void };
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  pace?: Pace;
}

/**
 * The store's simulated fulfilment (contract §8): every instance looks for orders whose next move fell
 * due (orders/lifecycle.ts) and makes it, with its event, in batches (./moves.ts `moveDue`). Instances
 * sharing PostgreSQL each take rows the others are not moving, so that each move is made once; a move
 * that fell due while no instance ran is made at the next start, by its first look.
 */
export class Fulfilment {
  #job: Periodic | undefined;
  #stopping = false;
  /** Set while the store fails: said once when it starts failing, and once when it works again. */
  #failing = false;

  constructor(private readonly deps: FulfilmentDeps) {}

  /** Makes every move due now, paced; answers how many orders moved. */
  async runDue(): Promise<number> {
    const { moves, transactions, clock, lag } = this.deps;
    let total = 0;
    await paced(
      async (size) => {
        const now = clock();
        const { moved, taken, oldestDueAt } = await transactions.run((trx) => moves.moveDue(trx, now, size));
        moves.moved(moved);
        lag.set(oldestDueAt === null ? 0 : Math.max(0, now - oldestDueAt) / 1000);
        total += moved.length;
        return taken === size;
      },
      this.deps.pace ?? FULFILMENT_PACE,
      () => this.#stopping,
    );
    return total;
  }

  /** Looks now, then every `FULFILMENT_INTERVAL_MS`; resolves once the first look (what fell due while no instance ran) is done. */
  start(): Promise<void> {
    this.#job ??= every(
      FULFILMENT_INTERVAL_MS,
      () => this.#look(),
      () => {},
    );
    return this.#job.first;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#job?.stop();
  }

  async #look(): Promise<void> {
    try {
      await this.runDue();
      if (this.#failing) this.deps.log.info({}, 'fulfilment: moving orders again');
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) this.deps.log.warn({ err: error }, 'fulfilment: could not move due orders; trying again every half second');
      this.#failing = true;
    }
  }
}
