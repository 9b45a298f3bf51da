import type { Db } from '../db/database.js';
import type { LogEntry } from './entry.js';
import { type Exchange, entryOf, sizeOf } from './exchange.js';

export interface LogFilter {
  status?: number | '4xx' | '5xx';
  method?: string;
  path?: string;
  check?: string;
}

/** A page of a key's log, newest first: entries, and where the next page starts (arrival, then the order kept). */
export interface LogPage {
  entries: LogEntry[];
  next: { receivedAt: number; seq: number } | null;
}

/**
 * The test keys' request logs (docs/request-log.md): where they are kept. On the embedded store, in this process's
 * memory (`MemoryRequestLog`: one process answers every request); on PostgreSQL, in the store, for every instance
 * (./store.ts).
 */
export interface RequestLog {
  /** Whether anything is recorded: an operator may keep no log at all (REQUEST_LOG_PER_KEY=0). */
  readonly recording: boolean;
  /** Keeps one exchange of the key's. */
  record(keyId: string, exchange: Exchange): void;
  page(keyId: string, filter: LogFilter, limit: number, after?: LogPage['next']): Promise<LogPage>;
  entry(keyId: string, requestId: string): Promise<LogEntry | undefined>;
  /** Which of these requests of the key still have an entry. */
  kept(keyId: string, requestIds: readonly string[]): Promise<Set<string>>;
  /** Empties the key's log (a reset's transaction is `trx`, for a log in the store). */
  clear(keyId: string, trx?: Db): Promise<void>;
  close(): Promise<void>;
}

/** Whether an exchange is one a filter selects. */
export function selects(filter: LogFilter, exchange: Pick<Exchange, 'status' | 'method' | 'path' | 'checks'>): boolean {
  const { status } = exchange;
  if (typeof filter.status === 'number' && status !== filter.status) return false;
  if (filter.status === '4xx' && !(status !== null && status >= 400 && status < 500)) return false;
  if (filter.status === '5xx' && !(status !== null && status >= 500 && status < 600)) return false;
  if (filter.method !== undefined && exchange.method !== filter.method) return false;
  if (filter.path !== undefined && exchange.path !== filter.path) return false;
  if (filter.check !== undefined && !exchange.checks.some((check) => check.id === filter.check)) return false;
  return true;
}

/** The most bytes (roughly: ./exchange.ts `sizeOf`) the memory log holds over all keys; the least recent go first. */
export const MEMORY_BUDGET_BYTES = 256 * 1024 * 1024;

interface Held {
  seq: number;
  exchange: Exchange;
  bytes: number;
}

/** A key's log: its exchanges, oldest first, and when it last recorded (the order of `#tick`). */
interface KeyLog {
  held: Held[];
  used: number;
}

/**
 * The logs in this process's memory (the embedded store): each key's newest `perKey` exchanges, held as they were
 * and made entries when read. Over all keys at most `budget` bytes: past it, the logs of the keys that recorded
 * least recently go whole. A restart forgets them, as it forgets the report cards.
 */
export class MemoryRequestLog implements RequestLog {
  readonly recording: boolean;
  readonly #logs = new Map<string, KeyLog>();
  #bytes = 0;
  #seq = 0;

  constructor(
    private readonly perKey: number,
    private readonly budget = MEMORY_BUDGET_BYTES,
  ) {
    this.recording = perKey > 0;
  }

  record(keyId: string, exchange: Exchange): void {
    let log = this.#logs.get(keyId);
    if (log === undefined) this.#logs.set(keyId, (log = { held: [], used: 0 }));
    log.used = ++this.#seq;
    const held = { seq: this.#seq, exchange, bytes: sizeOf(exchange) };
    log.held.push(held);
    this.#bytes += held.bytes;
    if (log.held.length > this.perKey) this.#bytes -= log.held.shift()!.bytes;
    while (this.#bytes > this.budget && this.#logs.size > 1) this.#dropLeastRecent();
  }

  /** The log of the key that recorded least recently, whole: a look at every key, once the budget is passed. */
  #dropLeastRecent(): void {
    let oldest: [string, KeyLog] | undefined;
    for (const entry of this.#logs) if (oldest === undefined || entry[1].used < oldest[1].used) oldest = entry;
    const [keyId, log] = oldest!;
    this.#logs.delete(keyId);
    for (const gone of log.held) this.#bytes -= gone.bytes;
  }

  async page(keyId: string, filter: LogFilter, limit: number, after?: LogPage['next']): Promise<LogPage> {
    const newestFirst = [...(this.#logs.get(keyId)?.held ?? [])].sort(
      (a, b) => b.exchange.real - a.exchange.real || b.seq - a.seq,
    );
    const found: Held[] = [];
    for (const held of newestFirst) {
      if (
        after &&
        !(held.exchange.real < after.receivedAt || (held.exchange.real === after.receivedAt && held.seq < after.seq))
      )
        continue;
      if (!selects(filter, held.exchange)) continue;
      found.push(held);
      if (found.length > limit) break;
    }
    const page = found.slice(0, limit);
    const last = page.at(-1);
    return {
      entries: page.map((held) => entryOf(held.exchange)),
      next: found.length > limit && last ? { receivedAt: last.exchange.real, seq: last.seq } : null,
    };
  }

  async entry(keyId: string, requestId: string): Promise<LogEntry | undefined> {
    const log = this.#logs.get(keyId)?.held ?? [];
    for (let i = log.length - 1; i >= 0; i--)
      if (log[i]!.exchange.requestId === requestId) return entryOf(log[i]!.exchange);
    return undefined;
  }

  async kept(keyId: string, requestIds: readonly string[]): Promise<Set<string>> {
    const wanted = new Set(requestIds);
    return new Set(
      (this.#logs.get(keyId)?.held ?? []).map((held) => held.exchange.requestId).filter((id) => wanted.has(id)),
    );
  }

  async clear(keyId: string): Promise<void> {
    for (const held of this.#logs.get(keyId)?.held ?? []) this.#bytes -= held.bytes;
    this.#logs.delete(keyId);
  }

  async close(): Promise<void> {}
}
