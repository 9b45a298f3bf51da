import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  SqliteAdapter,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  type SqliteStatement,
} from 'kysely';

/**
 * The embedded store's connections: Node's own `node:sqlite`, the one module that knows the binding.
 * It ships with every Node.js the service supports, so nothing is compiled or downloaded at install
 * and no native addon can fall out of step with the Node that loads it (why not `better-sqlite3`,
 * measured: docs/design.md#the-sqlite-binding).
 */
export type Connection = DatabaseSync;
export type Statement = StatementSync;

/**
 * A connection to the store in `file` (or `:memory:`), writers queueing for up to `busyTimeoutMs` instead of failing.
 */
export function openConnection(file: string, busyTimeoutMs: number): Connection {
  return new DatabaseSync(file, { timeout: busyTimeoutMs });
}

/** The first value a pragma answers (`journal_mode`, `data_version`…), or the only one. */
export function pragma(connection: Connection, statement: string): unknown {
  const row = connection.prepare(`PRAGMA ${statement}`).get();
  return row === undefined ? undefined : Object.values(row)[0];
}

/** The file a connection opened; null for a store in memory. */
export function fileOf(connection: Connection): string | null {
  return connection.location();
}

/**
 * Kysely's SQLite dialect with two of its parts changed through its documented extension points (a
 * dialect makes its driver and its adapter):
 * - SQLite's DDL is transactional (Kysely's adapter assumes not, for drivers that are not), so the
 *   migrator runs the pending migrations in one transaction, all or nothing;
 * - Kysely's transactions (here only the migrator's: the service's writes go through
 *   db/group-commit.ts) begin `IMMEDIATE`, not deferred: the write lock is taken before the migrator
 *   reads which migrations were applied, so two processes that open a new file at the same moment (a
 *   server and the CLI, two instances) migrate it one after the other, the second finding nothing
 *   left to do, instead of both creating the same tables.
 */
export class EmbeddedDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateTransactions(this.#config);
  }

  override createAdapter(): DialectAdapter {
    return new TransactionalDdl();
  }
}

class ImmediateTransactions extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class TransactionalDdl extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

/**
 * The connection as Kysely's SQLite dialect takes it (its documented `SqliteDatabase`: `prepare` and
 * `close`), with each statement compiled once and reused. Kysely prepares every query anew, and
 * compiling a statement costs SQLite more than running it; the service sends a few dozen distinct
 * statements. `beforeEach` runs before every query, whoever sends it (a request, the admin API, a
 * job): it may refuse by throwing (./store-files.ts).
 */
export function forKysely(connection: Connection, beforeEach: () => void): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    prepare(source) {
      beforeEach();
      let statement = cache.get(source);
      if (!statement) {
        // Bounded, should some query's text ever vary (an IN list of varying length).
        if (cache.size >= 500) cache.clear();
        statement = kyselyStatement(connection.prepare(source));
        cache.set(source, statement);
      }
      return statement;
    },
    close: () => connection.close(),
  };
}

/** Kysely binds an array of anonymous parameters, and asks whether a statement answers rows. */
function kyselyStatement(statement: Statement): SqliteStatement {
  type Values = Parameters<Statement['run']>;
  return {
    reader: statement.columns().length > 0,
    all: (parameters) => statement.all(...(parameters as Values)),
    run: (parameters) => statement.run(...(parameters as Values)),
    iterate: (parameters) => statement.iterate(...(parameters as Values)),
  };
}
