// The background checkpoints of ./checkpointer.ts, on a worker thread with a connection of its own.
// JavaScript checked by tsc (checkJs): a worker cannot load the TypeScript sources the tests import,
// and this file runs as it is from them and from the build.
import { clearInterval, setInterval } from 'node:timers';
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';

/** @type {{ file: string, intervalMs: number, restartPages: number, restartWaitMs: number }} */
const { file, intervalMs, restartPages, restartWaitMs } = workerData;
const connection = new SQLite(file);
connection.pragma('synchronous = NORMAL');
connection.pragma(`busy_timeout = ${restartWaitMs}`);

// PASSIVE copies what no reader still needs and never waits; past `restartPages` a RESTART follows.
const timer = setInterval(() => {
  const [result] = /** @type {{ log: number }[]} */ (connection.pragma('wal_checkpoint(PASSIVE)'));
  if (result && result.log > restartPages) connection.pragma('wal_checkpoint(RESTART)');
}, intervalMs);

parentPort?.on('message', () => {
  clearInterval(timer);
  connection.close();
  parentPort?.close();
});
