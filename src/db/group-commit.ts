import { type Db, isEmbedded, sqliteHandleOf } from './database.js';
import { TurnBatch } from '../turn-batch.js';
import type { Connection, Statement } from './sqlite.js';

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
 * How writes commit on `db`: in groups, on both stores. The units of one turn of the event loop (the
 * requests read together) share one transaction and one commit: `GroupCommit` on SQLite's one
 * connection, `PostgresGroupCommit` on one connection of PostgreSQL's pool.
 */
export function transactionsOf(db: Db): Transactions {
  let transactions = byStore.get(db);
  if (transactions === undefined) {
    transactions = isEmbedded(db) ? new GroupCommit(db) : new PostgresGroupCommit(db);
    byStore.set(db, transactions);
  }
  return transactions;
}

/** One per store: every write of a turn joins the same group (orders placed, moved, cancelled). */
const byStore = new WeakMap<Db, Transactions>();

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
 *
 * The transaction is `BEGIN IMMEDIATE`: it takes the write lock before any unit runs, waiting for
 * another writer (the CLI, a checkpoint's restart: ./checkpointer.ts) for up to SQLite's busy timeout.
 * Kysely's transactions begin deferred, and a deferred transaction that has read cannot wait for the
 * lock when it first writes: SQLite fails it at once, and with it the whole group. The statements
 * that steer the transaction are prepared once on the connection; the units' own go through Kysely,
 * on the connection this group holds (no other query runs in between, as in a Kysely transaction).
 */
class GroupCommit implements Transactions {
  /** After the turn's I/O every request read in it has reached its unit; one group commits at a time. */
  readonly #waiting = new TurnBatch<Pending>((group) => this.#commit(group));
  readonly #connection: Connection;
  readonly #steps: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'undo', Statement>;

  constructor(private readonly db: Db) {
    const connection = (this.#connection = sqliteHandleOf(db));
    const prepare = (source: string) => connection.prepare(source);
    this.#steps = {
      begin: prepare('begin immediate'),
      commit: prepare('commit'),
      rollback: prepare('rollback'),
      savepoint: prepare('savepoint unit'),
      release: prepare('release unit'),
      undo: prepare('rollback to unit'),
    };
  }

  run<T>(unit: Unit<T>): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.#waiting.add({ unit, resolve: resolve as (value: unknown) => void, reject }),
    );
  }

  async #commit(group: Pending[]): Promise<void> {
    let outcomes: Outcome[];
    try {
      outcomes = await this.db.connection().execute((connection) => this.#inTransaction(connection, group));
    } catch (error) {
      // Not even the rollback went through: nothing was committed.
      outcomes = group.map(() => ({ ok: false, error }));
    }
    outcomes.forEach((outcome, i) => (outcome.ok ? group[i]!.resolve(outcome.value) : group[i]!.reject(outcome.error)));
  }

  async #inTransaction(connection: Db, group: Pending[]): Promise<Outcome[]> {
    const steps = this.#steps;
    try {
      steps.begin.run();
    } catch (error) {
      // The write lock stayed another's for the whole busy timeout: nothing was written.
      return group.map(() => ({ ok: false, error }));
    }
    try {
      const outcomes: Outcome[] = [];
      if (group.length === 1) outcomes.push({ ok: true, value: await group[0]!.unit(connection) });
      else for (const pending of group) outcomes.push(await this.#inSavepoint(connection, pending.unit));
      steps.commit.run();
      return outcomes;
    } catch (error) {
      // A lone unit that threw, or a group that could not commit: rolled back, nothing written.
      if (this.#connection.isTransaction) steps.rollback.run();
      return group.map(() => ({ ok: false, error }));
    }
  }

  /** One unit of a group: kept when it returns, undone alone when it throws. Undoing that fails fails the group. */
  async #inSavepoint(connection: Db, unit: Unit<unknown>): Promise<Outcome> {
    const steps = this.#steps;
    steps.savepoint.run();
    try {
      const value = await unit(connection);
      steps.release.run();
      return { ok: true, value };
    } catch (error) {
      steps.undo.run();
      steps.release.run();
      return { ok: false, error };
    }
  }
}

/**
 * Group commit on PostgreSQL: the units that arrive within one turn run one after the other in one
 * transaction on one pooled connection, committed once. A group pays `BEGIN`, `COMMIT` and the flush of
 * the log once instead of once per unit, and holds one connection instead of one per unit (a unit
 * alone would hold its own for three round trips). While a group commits, the units that arrive wait
 * for the next, which is then larger: the busier the service, the fewer commits per unit.
 *
 * A unit that throws, or a statement PostgreSQL refuses (a unique key another instance wrote first, a
 * deadlock between two instances' groups, which PostgreSQL breaks by failing one), rolls the group
 * back whole; its units then run again, each in a transaction of its own, as they would alone, and
 * each succeeds or fails by itself. A group whose units all ran but whose `COMMIT` failed rejects
 * them all, none run again: a commit that failed may not be retried blindly.
 */
class PostgresGroupCommit implements Transactions {
  readonly #waiting = new TurnBatch<Pending>((group) => this.#commit(group));

  constructor(private readonly db: Db) {}

  run<T>(unit: Unit<T>): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.#waiting.add({ unit, resolve: resolve as (value: unknown) => void, reject }),
    );
  }

  async #commit(group: Pending[]): Promise<void> {
    if (group.length > 1) {
      let ranAll = false;
      try {
        const values = await this.db.transaction().execute(async (trx) => {
          const values: unknown[] = [];
          for (const pending of group) values.push(await pending.unit(trx));
          ranAll = true;
          return values;
        });
        values.forEach((value, i) => group[i]!.resolve(value));
        return;
      } catch (error) {
        if (ranAll) return group.forEach((pending) => pending.reject(error));
      }
    }
    await Promise.all(
      group.map(({ unit, resolve, reject }) => this.db.transaction().execute(unit).then(resolve, reject)),
    );
  }
}
