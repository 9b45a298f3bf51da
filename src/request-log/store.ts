import { type Db, isEmbedded } from '../db/database.js';
import { prepared } from '../db/prepared.js';
import { transactionsOf } from '../db/group-commit.js';
import type { LogEntry } from './entry.js';
import { type Exchange, entryOf } from './exchange.js';
import type { LogFilter, LogPage, RequestLog } from './log.js';

/** A key's log is cut back to its newest entries after this many writes (so it holds at most this many more). */
const TRIM_EVERY = 100;
/** How often an instance writes what it recorded: an entry is everywhere within this (and a second). */
const FLUSH_MS = 200;
/** Entries held at most before a write is forced. */
const MAX_PENDING = 500;

interface Pending {
  keyId: string;
  exchange: Exchange;
}

/**
 * The test keys' request logs (docs/request-log.md) in the store (PostgreSQL), so that every instance reads them. An instance
 * holds what it recorded for at most `FLUSH_MS` and writes it in one transaction (a statement compiled once, per
 * entry); a key's log is cut back to its newest `perKey` every `TRIM_EVERY` writes and before every read of it. A
 * read through the instance that recorded an entry writes first, so its own entries are there once their answers
 * are sent, and every other instance's within a second.
 */
export class StoreRequestLog implements RequestLog {
  readonly recording: boolean;
  #pending: Pending[] = [];
  /** Entries written per key since its log was last cut back. */
  readonly #sinceTrim = new Map<string, number>();
  #writing: Promise<void> = Promise.resolve();
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly warn: (fields: object, message: string) => void,
    /** Exchanges kept per key (REQUEST_LOG_PER_KEY): the oldest go first. */
    private readonly perKey: number,
  ) {
    this.recording = perKey > 0;
    this.#timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.#timer.unref();
  }

  record(keyId: string, exchange: Exchange): void {
    this.#pending.push({ keyId, exchange });
    if (this.#pending.length >= MAX_PENDING) void this.flush();
  }

  /** Writes what this instance holds; settles once it and every write before it are done. */
  flush(): Promise<void> {
    const batch = this.#pending;
    if (batch.length === 0) return this.#writing;
    this.#pending = [];
    this.#writing = this.#writing.then(() =>
      this.#write(batch).catch((error: unknown) => this.warn({ err: error }, 'request log: entries were not kept')),
    );
    return this.#writing;
  }

  async page(keyId: string, filter: LogFilter, limit: number, after?: LogPage['next']): Promise<LogPage> {
    await this.#settled(keyId);
    let query = this.db
      .selectFrom('request_log')
      .select(['seq', 'received_at', 'entry'])
      .where('api_key_id', '=', keyId);
    if (typeof filter.status === 'number') query = query.where('status', '=', filter.status);
    else if (filter.status !== undefined) {
      const from = filter.status === '4xx' ? 400 : 500;
      query = query.where('status', '>=', from).where('status', '<', from + 100);
    }
    if (filter.method !== undefined) query = query.where('method', '=', filter.method);
    if (filter.path !== undefined) query = query.where('path', '=', filter.path);
    if (filter.check !== undefined) query = query.where('checks', 'like', `%,${filter.check},%`);
    if (after)
      query = query.where((eb) =>
        eb.or([
          eb('received_at', '<', after.receivedAt),
          eb.and([eb('received_at', '=', after.receivedAt), eb('seq', '<', after.seq)]),
        ]),
      );
    const rows = await query
      .orderBy('received_at', 'desc')
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      entries: page.map((row) => JSON.parse(row.entry) as LogEntry),
      next: rows.length > limit && last ? { receivedAt: Number(last.received_at), seq: Number(last.seq) } : null,
    };
  }

  async entry(keyId: string, requestId: string): Promise<LogEntry | undefined> {
    await this.#settled(keyId);
    const row = await this.db
      .selectFrom('request_log')
      .select('entry')
      .where('api_key_id', '=', keyId)
      .where('request_id', '=', requestId)
      .orderBy('seq', 'desc')
      .executeTakeFirst();
    return row && (JSON.parse(row.entry) as LogEntry);
  }

  /** Which of these requests of the key still have an entry. */
  async kept(keyId: string, requestIds: readonly string[]): Promise<Set<string>> {
    if (requestIds.length === 0) return new Set();
    await this.#settled(keyId);
    const rows = await this.db
      .selectFrom('request_log')
      .select('request_id')
      .where('api_key_id', '=', keyId)
      .where('request_id', 'in', [...new Set(requestIds)])
      .execute();
    return new Set(rows.map((row) => row.request_id));
  }

  /**
   * Empties the key's log (through `trx`: a reset's transaction), what this instance holds of it included. A write
   * under way may still hold some of the key's entries: they are deleted once it is done, before any later write
   * (and before a read through this instance).
   */
  async clear(keyId: string, trx: Db = this.db): Promise<void> {
    this.#pending = this.#pending.filter((pending) => pending.keyId !== keyId);
    await trx.deleteFrom('request_log').where('api_key_id', '=', keyId).execute();
    this.#writing = this.#writing.then(() =>
      this.db
        .deleteFrom('request_log')
        .where('api_key_id', '=', keyId)
        .execute()
        .then(
          () => undefined,
          (error: unknown) => this.warn({ err: error }, 'request log: a cleared log was not emptied'),
        ),
    );
  }

  /** Before a read of the key's log: what this instance holds is written, and the log cut back to its newest. */
  async #settled(keyId: string): Promise<void> {
    await this.flush();
    await this.#trim(keyId);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  async #write(batch: Pending[]): Promise<void> {
    const kind = isEmbedded(this.db) ? 'sqlite' : 'postgres';
    const due: string[] = [];
    await transactionsOf(this.db).run(async (trx) => {
      for (const { keyId, exchange } of batch) {
        const entry = entryOf(exchange);
        await insertEntry(trx, kind, {
          keyId,
          requestId: entry.requestId,
          receivedAt: Date.parse(entry.receivedAt),
          method: entry.method,
          path: entry.path,
          status: entry.status,
          checks: `,${entry.checks.map((check) => check.id).join(',')},`,
          entry: JSON.stringify(entry),
        });
        const since = (this.#sinceTrim.get(keyId) ?? 0) + 1;
        this.#sinceTrim.set(keyId, since);
        if (since === TRIM_EVERY) due.push(keyId);
      }
      for (const keyId of due) {
        this.#sinceTrim.delete(keyId);
        await this.#trim(keyId, trx);
      }
    });
  }

  /** Keeps the key's newest `perKey` entries: one walk of its index, one delete. */
  async #trim(keyId: string, db: Db = this.db): Promise<void> {
    const oldestKept = await db
      .selectFrom('request_log')
      .select(['received_at', 'seq'])
      .where('api_key_id', '=', keyId)
      .orderBy('received_at', 'desc')
      .orderBy('seq', 'desc')
      .limit(1)
      .offset(this.perKey - 1)
      .executeTakeFirst();
    if (oldestKept === undefined) return;
    await db
      .deleteFrom('request_log')
      .where('api_key_id', '=', keyId)
      .where((eb) =>
        eb.or([
          eb('received_at', '<', oldestKept.received_at),
          eb.and([eb('received_at', '=', oldestKept.received_at), eb('seq', '<', oldestKept.seq)]),
        ]),
      )
      .execute();
  }
}

/** One entry's row: compiled once (../db/prepared.ts), as every test key's request writes one. */
const insertEntry = prepared(
  ['keyId', 'requestId', 'receivedAt', 'method', 'path', 'status', 'checks', 'entry'],
  (
    db,
    args: {
      keyId: string;
      requestId: string;
      receivedAt: number;
      method: string;
      path: string;
      status: number | null;
      checks: string;
      entry: string;
    },
  ) =>
    db.insertInto('request_log').values({
      api_key_id: args.keyId,
      request_id: args.requestId,
      received_at: args.receivedAt,
      method: args.method,
      path: args.path,
      status: args.status,
      checks: args.checks,
      entry: args.entry,
    }),
);
