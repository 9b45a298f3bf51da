// The background checkpoints of ./checkpointer.ts, on a worker thread with a connection of its own.
// JavaScript checked by tsc (checkJs): a worker cannot load the TypeScript sources the tests import,
// and this file runs as it is from them and from the build.
import { clearInterval, setInterval } from 'node:timers';
import { parentPort, workerData } from 'node:worker_threads';
import { DatabaseSync } from 'node:sqlite';

/** @type {{ file: string, intervalMs: number, restartPages: number, restartWaitMs: number }} */
const { file, intervalMs, restartPages, restartWaitMs } = workerData;
const connection = new DatabaseSync(file, { timeout: restartWaitMs });
connection.exec('PRAGMA synchronous = NORMAL');

// PASSIVE copies what no reader still needs and never waits; past `restartPages` a RESTART follows.
const timer = setInterval(() => {
  const [result] = /** @type {{ log: number }[]} */ (connection.prepare('PRAGMA wal_checkpoint(PASSIVE)').all());
  if (result && result.log > restartPages) connection.exec('PRAGMA wal_checkpoint(RESTART)');
}, intervalMs);

parentPort?.on('message', () => {
  clearInterval(timer);
  connection.close();
  parentPort?.close();
});
