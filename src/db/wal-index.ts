import { openSync, readSync, statSync } from 'node:fs';
import type SQLite from 'better-sqlite3';
import { hasWriteAheadLog } from './database.js';

/**
 * The first copy of an SQLite store's WAL-index header (`WalIndexHdr`, the first 48 bytes of the
 * `-shm` file). Every commit to the store, by any connection of any process, rewrites it before it
 * returns: while it reads the same, nothing has been committed. One `pread`, as SQLite itself reads
 * it to begin a read transaction (see ./change-feed.ts).
 */
export class WalIndexHeader {
  static readonly #BYTES = 48;
  readonly #fd: number;
  readonly #last = Buffer.alloc(WalIndexHeader.#BYTES);
  readonly #read = Buffer.alloc(WalIndexHeader.#BYTES);

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /**
   * The header of the connection's store; null for a store with no `-shm` file (in memory, or not in
   * WAL mode). The file is opened once per process and never closed: closing any descriptor of a file
   * releases every POSIX lock the process holds on it, and SQLite's connections hold theirs on this one.
   */
  static of(connection: SQLite.Database): WalIndexHeader | null {
    if (!hasWriteAheadLog(connection)) return null;
    const path = `${connection.name}-shm`;
    let fd: number;
    try {
      const { dev, ino } = statSync(path);
      const file = `${dev}:${ino}`;
      fd = descriptors.get(file) ?? openSync(path, 'r');
      descriptors.set(file, fd);
    } catch {
      return null;
    }
    return new WalIndexHeader(fd);
  }

  /** Whether the header reads as it did last time; a changed one is remembered. */
  unchanged(): boolean {
    readSync(this.#fd, this.#read, 0, WalIndexHeader.#BYTES, 0);
    if (this.#read.equals(this.#last)) return true;
    this.#read.copy(this.#last);
    return false;
  }
}

/** The `-shm` files open in this process, by device and inode (an open descriptor keeps its inode's number taken). */
const descriptors = new Map<string, number>();
