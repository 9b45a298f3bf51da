import { sql } from 'kysely';
import { type Db, isEmbedded } from './database.js';

/** Work that must be written whole or not at all: it reads and writes through `trx` only. */
export type Unit<T> = (trx: Db) => Promise<T>;

export interface Transactions {
  /**
   * Runs `unit` in a transaction. Resolves with its value once it is committed (a value it answers is
   * then durable as a commit is: ./database.ts); rejects, having written nothing, when it throws or
   * when its commit fails.
   */
  run<T>(unit: Unit<T>): Promise<T>;
}

/**
 * How writes commit on `db`. The embedded store commits in groups (`GroupCommit`); PostgreSQL runs
 * each unit in a transaction of its own: its pool runs them side by side and PostgreSQL already
 * flushes the log once for the commits that arrive together. Grouping there would queue them on one
 * connection, and two instances' groups could each hold a row the other waits for (a deadlock where
 * single units cannot have one).
 */
export function transactionsOf(db: Db): Transactions {
  return isEmbedded(db) ? new GroupCommit(db) : { run: (unit) => db.transaction().execute(unit) };
}

interface Pending {
  unit: Unit<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit on SQLite's one connection: the units that arrive within one turn of the event loop
 * (the requests read together) are run one after the other in one transaction, each in a savepoint
 * of its own, and committed once. A commit's fixed cost (its locks, and the log pages every unit
 * touches: the table's last page, the index's) is then paid once per group instead of once per unit,
 * and nobody is answered before the group is committed. A unit that throws is rolled back to its
 * savepoint and rejected alone; a group whose commit fails rejects all its units, none written.
 * While a group commits, the units that arrive wait for the next.
 */
class GroupCommit implements Transactions {
  #waiting: Pending[] = [];
  #scheduled = false;

  constructor(private readonly db: Db) {}

  run<T>(unit: Unit<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ unit, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) this.#schedule();
    });
  }

  #schedule(): void {
    this.#scheduled = true;
    // After the turn's I/O: every request read in it has reached its unit by then.
    setImmediate(() => void this.#commit());
  }

  async #commit(): Promise<void> {
    const group = this.#waiting;
    this.#waiting = [];
    let outcomes: Outcome[];
    try {
      outcomes = await this.db.transaction().execute(async (trx) => {
        if (group.length === 1) return [{ ok: true, value: await group[0]!.unit(trx) }];
        const each: Outcome[] = [];
        for (const pending of group) each.push(await inSavepoint(trx, pending.unit));
        return each;
      });
    } catch (error) {
      // A lone unit that threw (rolled back), or a group that could not commit: nothing was written.
      outcomes = group.map(() => ({ ok: false, error }));
    }
    outcomes.forEach((outcome, i) => (outcome.ok ? group[i]!.resolve(outcome.value) : group[i]!.reject(outcome.error)));
    if (this.#waiting.length > 0) this.#schedule();
    else this.#scheduled = false;
  }
}

/** One unit of a group: kept when it returns, undone alone when it throws. Undoing that fails fails the group. */
async function inSavepoint(trx: Db, unit: Unit<unknown>): Promise<Outcome> {
  await sql`savepoint unit`.execute(trx);
  try {
    const value = await unit(trx);
    await sql`release unit`.execute(trx);
    return { ok: true, value };
  } catch (error) {
    await sql`rollback to unit`.execute(trx);
    await sql`release unit`.execute(trx);
    return { ok: false, error };
  }
}
