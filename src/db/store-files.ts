import { statSync } from 'node:fs';
import { type Connection, fileOf } from './sqlite.js';

/**
 * How often the files are looked at: a store moved from under
 * the service is refused within this (and well within a second).
 */
export const WATCH_MS = 250;

/**
 * Whether an SQLite store's files are still the ones its connection opened. A connection keeps the
 * files it opened, by inode: if the database file is deleted or replaced (renamed over), or its `-wal`
 * or `-shm` file deleted, the service would go on reading and writing files nobody else sees, and
 * changes made through the path (the CLI revoking a key) would never reach it. So each file is
 * remembered by device and inode from the first time it is seen (`-wal` and `-shm` appear with the
 * first transaction), and a file that then goes missing or becomes another one marks the store moved,
 * for good: only a restart opens the files the path now names. Overwriting a file in place (same
 * inode) is not seen here; to SQLite that is corruption, as it is for any SQLite application.
 */
export class StoreFiles {
  #moved = false;
  readonly #seen = new Map<string, string>();
  readonly #timer: NodeJS.Timeout;

  private constructor(
    private readonly connection: Connection,
    private readonly file: string,
  ) {
    this.look();
    this.#timer = setInterval(() => this.look(), WATCH_MS).unref();
  }

  /** Watches a store kept in a file; null for one in memory. Stops by itself once the connection is closed. */
  static watch(connection: Connection): StoreFiles | null {
    const file = fileOf(connection);
    return file === null ? null : new StoreFiles(connection, file);
  }

  /** True once a file of the store went missing or was replaced. */
  get moved(): boolean {
    return this.#moved;
  }

  /** One look at the files: what the watch does every `WATCH_MS` (a test looks when it has moved them). */
  look(): void {
    if (!this.connection.isOpen) return clearInterval(this.#timer);
    if (this.#moved) return;
    for (const file of [this.file, `${this.file}-wal`, `${this.file}-shm`]) {
      const now = identity(file);
      const then = this.#seen.get(file);
      if (then === undefined) {
        if (now !== null) this.#seen.set(file, now);
      } else if (now !== then) {
        this.#moved = true;
        return clearInterval(this.#timer);
      }
    }
  }
}

/** A file's device and inode; null when there is none by that name. */
function identity(file: string): string | null {
  const stats = statSync(file, { throwIfNoEntry: false });
  return stats ? `${stats.dev}:${stats.ino}` : null;
}
