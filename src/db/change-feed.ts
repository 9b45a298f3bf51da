import pg from 'pg';
import type { Clock } from '../clock.js';
import type { DatabaseConfig } from './database.js';
import { currentSchema, type Db, sqliteHandleOf, storeMoved } from './database.js';
import { StoreMovedError } from './errors.js';

/** The tables whose rows the service holds in memory (see ./row-cache.ts). */
export type CachedTable = 'api_keys' | 'pets' | 'orders' | 'test_clocks' | 'test_scripts';

/** A row that changed; `id: null`: any row of any table may have changed, so forget everything. */
export type Change = { table: CachedTable; id: string } | { table: null; id: null };

/**
 * Tells the caches in memory when rows they hold have changed, wherever the change was made:
 *
 * - in this process: `changed()` is called by the repository that wrote, before it answers, so the
 *   change applies at the key's next request here;
 * - by another process on the same SQLite file (the CLI): `PRAGMA data_version`, asked before a request's
 *   first cached read (the public listener asks once for the requests read in one turn, http/server.ts),
 *   says that another connection wrote, and everything is forgotten;
 * - on PostgreSQL, by anyone (another instance, the CLI, an operator's SQL): triggers notify
 *   (`LISTEN/NOTIFY`, migration 003), typically within milliseconds. While the notification channel
 *   is not known to be alive, a row read more than `RECHECK_MS` ago is read again.
 *
 * Orders are told by this process only (no trigger notifies them): their pages are kept by this feed
 * only where it is `immediate`, elsewhere under stamps in Redis (orders/order-pages.ts).
 */
export interface ChangeFeed {
  /**
   * Whether every change, wherever it was made, is heard before the next request's first cached read
   * (SQLite: this process's own, and others' through `check()`); on PostgreSQL a change made elsewhere
   * takes the notification's delay. What must be seen at once everywhere is cached only where this holds.
   */
  readonly immediate: boolean;
  /**
   * Notices writes made by another process where only asking tells (SQLite). It is asked before a
   * request's first cached read (the key's): on the public listener once for all the requests read in
   * one turn of the event loop (`checked`, from http/server.ts), elsewhere per request.
   */
  check(): void;
  /** Whether `check()` reads anything (SQLite); on PostgreSQL it is nothing, and no request waits for it. */
  readonly checkReads: boolean;
  /**
   * Asks once, then runs `serve`, in which `check()` trusts that look: for requests that were all read
   * before it (a turn's requests, http/server.ts). Anything `serve` leaves for later asks again.
   */
  checked(serve: () => void): void;
  /** Whether a row read at `readAt` may still be served at `now` without reading it again. */
  trusts(readAt: number, now: number): boolean;
  /** This process changed a row: every cache hears it before this returns. */
  changed(table: CachedTable, id: string): void;
  subscribe(listener: (change: Change) => void): void;
  /** Resolves once changes made elsewhere are heard (at once on SQLite; on PostgreSQL, once listening). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** The longest a cached row may be served while changes made elsewhere could go unheard. */
export const RECHECK_MS = 1_000;

export interface ChangeFeedOptions {
  clock: Clock;
  /** Told when the PostgreSQL channel is lost and when it is back. */
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

export function openChangeFeed(db: Db, config: DatabaseConfig, options: ChangeFeedOptions): ChangeFeed {
  return config.kind === 'sqlite'
    ? new SqliteChangeFeed(db, options.log)
    : new PostgresChangeFeed(db, config.url, options);
}

/** What both feeds share: the listeners, and changes made by this process. */
abstract class Listeners {
  readonly #listeners: ((change: Change) => void)[] = [];

  subscribe(listener: (change: Change) => void): void {
    this.#listeners.push(listener);
  }

  changed(table: CachedTable, id: string): void {
    this.emit({ table, id });
  }

  protected emit(change: Change): void {
    for (const listener of this.#listeners) listener(change);
  }
}

/**
 * SQLite: this process has the only connection it writes through; other processes' commits show in
 * `PRAGMA data_version`, SQLite's documented question for exactly this. Asking it begins a read (file
 * locks, system calls of their own), so the public listener asks once for all the requests read in one turn
 * (`checked`; docs/performance.md#every-request-through-fastify). A store whose files were deleted or replaced
 * under the service (./store-files.ts) gives no news at all: asking throws, and every request that needs the store
 * is refused (`503`).
 */
class SqliteChangeFeed extends Listeners implements ChangeFeed {
  readonly immediate = true;
  readonly checkReads = true;
  readonly #db: Db;
  readonly #dataVersion: () => number;
  readonly #log: ChangeFeedOptions['log'];
  #seen: number;
  /** Set while `checked` serves: a look was taken after every request being served was read. */
  #looked = false;
  #toldMoved = false;

  constructor(db: Db, log: ChangeFeedOptions['log']) {
    super();
    this.#db = db;
    this.#log = log;
    const statement = sqliteHandleOf(db).prepare('PRAGMA data_version');
    this.#dataVersion = () => statement.get()!.data_version as number;
    this.#seen = this.#dataVersion();
  }

  check(): void {
    if (this.#looked) return;
    if (storeMoved(this.#db)) this.#moved();
    const version = this.#dataVersion();
    if (version === this.#seen) return;
    this.#seen = version;
    this.emit({ table: null, id: null });
  }

  #moved(): never {
    if (!this.#toldMoved) {
      this.#toldMoved = true;
      this.#log?.warn({}, "the SQLite store's files were deleted or replaced: refusing requests (503) until restarted");
    }
    throw new StoreMovedError();
  }

  checked(serve: () => void): void {
    try {
      this.check();
    } catch {
      // The look failed: nothing is trusted, each request asks again and answers its own failure.
      return serve();
    }
    this.#looked = true;
    try {
      serve();
    } finally {
      this.#looked = false;
    }
  }

  trusts(): boolean {
    return true;
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {}
}

/** Notifications travel on this channel; the payload is `<schema> <table> <id>` (see migration 003). */
export const CHANGES_CHANNEL = 'petstore_changes';
/** How often the listening connection proves it is alive. */
const HEARTBEAT_MS = 250;
/** A heartbeat unanswered this long means the connection is gone, whatever the socket says. */
const HEARTBEAT_DEADLINE_MS = 2_000;
const RECONNECT_MS = 500;

/**
 * PostgreSQL: one connection of its own LISTENs. A notification is delivered before the answer to any
 * query sent after it was committed, so a heartbeat answered proves that every change committed before
 * it was sent has been heard. Rows are trusted while the last answered heartbeat was sent less than
 * `RECHECK_MS` ago and they were read on the current connection; otherwise for `RECHECK_MS` after reading.
 */
class PostgresChangeFeed extends Listeners implements ChangeFeed {
  readonly immediate = false;
  readonly checkReads = false;
  readonly #url: string;
  readonly #clock: Clock;
  readonly #log: ChangeFeedOptions['log'];
  readonly #db: Db;
  #client: pg.Client | null = null;
  #schema = '';
  /** When the current connection started listening; Infinity while there is none. */
  #listeningSince = Number.POSITIVE_INFINITY;
  /** When the last answered heartbeat was sent. */
  #aliveAt = Number.NEGATIVE_INFINITY;
  #heartbeatSentAt: number | null = null;
  #timer: NodeJS.Timeout;
  #closed = false;
  #lost = false;
  #listening: Promise<void>;
  #heardFirst: () => void = () => {};

  constructor(db: Db, url: string, { clock, log }: ChangeFeedOptions) {
    super();
    this.#db = db;
    this.#url = url;
    this.#clock = clock;
    this.#log = log;
    this.#timer = setInterval(() => this.#beat(), HEARTBEAT_MS).unref();
    this.#listening = new Promise((resolve) => (this.#heardFirst = resolve));
    void this.#connect();
  }

  ready(): Promise<void> {
    return this.#listening;
  }

  check(): void {}

  checked(serve: () => void): void {
    serve();
  }

  trusts(readAt: number, now: number): boolean {
    if (now - readAt < RECHECK_MS) return true;
    return readAt >= this.#listeningSince && now - this.#aliveAt < RECHECK_MS;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#client?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    if (this.#closed || this.#client) return;
    const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: HEARTBEAT_DEADLINE_MS });
    this.#client = client;
    client.on('error', () => this.#drop(client));
    client.on('end', () => this.#drop(client));
    client.on('notification', ({ payload }) => this.#heard(payload ?? ''));
    try {
      await client.connect();
      this.#schema ||= await currentSchema(this.#db);
      const since = this.#clock();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
      if (this.#client !== client) return;
      // Whatever changed while nobody listened is unknown: rows read before now are read again.
      this.#listeningSince = since;
      this.#aliveAt = since;
      this.emit({ table: null, id: null });
      if (this.#lost) this.#log?.info({}, 'listening for key and catalogue changes again');
      this.#lost = false;
      this.#heardFirst();
    } catch {
      this.#drop(client);
    }
  }

  #drop(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = null;
    this.#listeningSince = Number.POSITIVE_INFINITY;
    this.#heartbeatSentAt = null;
    client.end().catch(() => {});
    if (this.#closed) return;
    if (!this.#lost)
      this.#log?.warn(
        {},
        `not listening for key and catalogue changes: cached keys are re-read at least once a second`,
      );
    this.#lost = true;
    setTimeout(() => void this.#connect(), RECONNECT_MS).unref();
  }

  #beat(): void {
    const client = this.#client;
    if (!client || this.#listeningSince === Number.POSITIVE_INFINITY) return;
    const now = this.#clock();
    if (this.#heartbeatSentAt !== null) {
      if (now - this.#heartbeatSentAt > HEARTBEAT_DEADLINE_MS) this.#drop(client);
      return;
    }
    this.#heartbeatSentAt = now;
    client.query('SELECT 1').then(
      () => {
        if (this.#client !== client || this.#heartbeatSentAt === null) return;
        this.#aliveAt = this.#heartbeatSentAt;
        this.#heartbeatSentAt = null;
      },
      () => this.#drop(client),
    );
  }

  #heard(payload: string): void {
    const [schema, table, id] = payload.split(' ');
    if (schema !== this.#schema || (table !== 'api_keys' && table !== 'pets') || !id) return;
    this.emit({ table, id });
  }
}
