import type { Clock } from '../clock.js';
import type { Transactions } from '../db/group-commit.js';
import type { Pace } from '../jobs/paced.js';
import { type JobLog, SlicedJob } from '../jobs/sliced-job.js';
import type { OrderMoves } from './moves.js';

/**
 * The most moves of one key's catch-up in one transaction: on SQLite, whose statements hold the event
 * loop, few enough to leave it to others between slices; on PostgreSQL, which holds nothing but the
 * key's rows, more, to spare transactions.
 */
const CATCH_UP_SLICE = { sqlite: 40, postgres: 1_000 } as const;

/** Makes every move of `owner`'s that fell due by `to` in its time, in slices; answers how many. */
export async function catchUp(
  moves: OrderMoves,
  transactions: Transactions,
  owner: string,
  to: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const { moved, more } = await transactions.run((trx) => moves.catchUp(trx, owner, to, CATCH_UP_SLICE[moves.store]));
    await moves.moved(moved);
    total += moved.length;
    if (!more) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * How often each instance looks for orders that fell due: a move
 * happens within this of falling due, and the time to make it.
 */
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
  log: JobLog;
  pace?: Pace;
}

/**
 * The store's simulated fulfilment (docs/orders-and-events.md): every instance looks for orders whose next move fell
 * due (orders/lifecycle.ts) and makes it, with its event, in batches (./moves.ts `moveDue`). Instances
 * sharing PostgreSQL each take rows the others are not moving, so that each move is made once; a move
 * that fell due while no instance ran is made at the next start, by its first look.
 */
export class Fulfilment {
  readonly #job: SlicedJob;

  constructor(private readonly deps: FulfilmentDeps) {
    this.#job = new SlicedJob({
      name: 'fulfilment',
      everyMs: FULFILMENT_INTERVAL_MS,
      pace: deps.pace ?? FULFILMENT_PACE,
      log: deps.log,
    });
  }

  /** Makes every move due now, paced; answers how many orders moved. */
  async runDue(): Promise<number> {
    const { moves, transactions, clock, lag } = this.deps;
    let total = 0;
    await this.#job.pass(async (size) => {
      const now = clock();
      const { moved, taken, oldestDueAt } = await transactions.run((trx) => moves.moveDue(trx, now, size));
      await moves.moved(moved);
      lag.set(oldestDueAt === null ? 0 : Math.max(0, now - oldestDueAt) / 1000);
      total += moved.length;
      return taken === size;
    });
    return total + (await this.runClocked());
  }

  /**
   * The moves of test keys whose running clock a test moved, in their time, each at its due instant
   * (`OrderMoves.catchUp`); a frozen clock's fall due only as an advance moves it (test-mode/).
   */
  async runClocked(): Promise<number> {
    const { moves, transactions, clock } = this.deps;
    let total = 0;
    for (const { owner, offsetMs } of await transactions.run((trx) => moves.runningClocksWithDueOrders(trx))) {
      total += await catchUp(moves, transactions, owner, clock() + offsetMs);
    }
    return total;
  }

  /**
   * Looks now, then every `FULFILMENT_INTERVAL_MS`; resolves once
   * the first look (what fell due while no instance ran) is done.
   */
  start(): Promise<void> {
    return this.#job.start(() => this.runDue());
  }

  stop(): Promise<void> {
    return this.#job.stop();
  }
}
