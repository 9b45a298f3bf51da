import { Worker } from 'node:worker_threads';
import { type Db, hasWriteAheadLog, sqliteHandleOf } from './database.js';
import { fileOf } from './sqlite.js';

/** How often the background connection copies the log back into the store. */
export const CHECKPOINT_INTERVAL_MS = 200;
/** SQLite's own threshold, in log pages, which the service's connection takes back if the background one is lost. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
/** The longest the background connection holds the writers back to restart the log (see below). */
const RESTART_WAIT_MS = 20;

/** The background connection: a checkpoint every `intervalMs` (./checkpoint-worker.mjs). */
const WORKER = new URL('./checkpoint-worker.mjs', import.meta.url);

export interface Checkpointer {
  close(): Promise<void>;
}

/**
 * Moves the embedded store's checkpoints off the event loop. SQLite copies its write-ahead log back into
 * the store at checkpoints, and by default the connection whose commit takes the log past 1,000 pages
 * does it inside that commit: for the service that is the event loop, held for the copy and its disk
 * sync while every request waits (placing orders, the slowest answers were slower still:
 * docs/performance.md#every-request-through-fastify). The
 * service's connection now checkpoints nothing; a second connection, on a worker thread, checkpoints
 * every `intervalMs`. Durability is SQLite's either way: a commit is in the log before it returns.
 *
 * The log starts again from its beginning only when a writer begins while every frame of it has been
 * copied. Under writes that never pause, a PASSIVE checkpoint never catches up (the frames committed
 * while it copied are left), so the log would grow for as long as the writes last, each commit
 * extending the file (the kernel zeroing and allocating its new pages, on the event loop). So once the log is past
 * `restartPages` (SQLite's own checkpoint threshold), the PASSIVE checkpoint, which copied the bulk while the writers
 * went on, is followed by a RESTART: it holds new writers back while it copies the few frames committed since and
 * syncs (at most `RESTART_WAIT_MS` waiting for a reader), and the next
 * commit starts the log again, over pages the file already has. The service's transactions take the
 * write lock when they begin (./group-commit.ts), so they wait for it rather than fail.
 * Should the worker fail, the service's connection checkpoints as SQLite does by default again, so the
 * log cannot grow without bound. Null for a store with no log (in memory, not in WAL mode).
 */
export function checkpointInBackground(
  db: Db,
  {
    intervalMs = CHECKPOINT_INTERVAL_MS,
    restartPages = SQLITE_AUTOCHECKPOINT_PAGES,
    script = WORKER,
    log,
  }: {
    intervalMs?: number;
    restartPages?: number;
    /** The worker's code: ./checkpoint-worker.mjs (a test gives one that fails). */
    script?: URL;
    log: { warn(obj: object, msg: string): void };
  },
): Checkpointer | null {
  const connection = sqliteHandleOf(db);
  if (!hasWriteAheadLog(connection)) return null;
  const worker = new Worker(script, {
    workerData: { file: fileOf(connection), intervalMs, restartPages, restartWaitMs: RESTART_WAIT_MS },
  });
  let closing = false;
  const lost = (error?: unknown) => {
    if (closing) return;
    closing = true;
    if (connection.isOpen) connection.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    log.warn({ err: error }, 'the background checkpoints stopped; the service checkpoints its log itself again');
  };
  worker.on('error', lost);
  worker.on('exit', () => lost());
  // A pending checkpoint must not keep the process alive.
  worker.unref();
  connection.exec('PRAGMA wal_autocheckpoint = 0');
  return {
    async close(): Promise<void> {
      if (closing) return;
      closing = true;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      // Held until the worker is gone: else a process with nothing else left would end before the store closes.
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}
