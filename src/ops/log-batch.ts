import type pino from 'pino';
import { TurnBatch } from '../turn-batch.js';

/**
 * Log lines gathered over one turn of the event loop, then written to `destination` together: one
 * string, one synchronous write (pino's destination with `sync: true`: nothing is queued elsewhere,
 * no thread is woken). A line waits at most for the rest of its turn; a line of the last turn is written
 * on the process's `exit` (a crash included); `flush` writes at once. Every line of the logger goes
 * through here, in order.
 *
 * Why: at `LOG_LEVEL=info` each request writes an access line. Written one by one, each line is a
 * system call; written by pino's asynchronous destination, each line made sonic-boom measure again the
 * whole text it held while a write was in flight (a rope of kilobytes, copied flat each time), and each
 * write woke a thread of libuv's pool. Gathered per turn, the default configuration loses least
 * against `warn` (measured: docs/performance.md#logging).
 *
 * A standard output that stops being read (a full pipe) stops the service at its next write, as pino's
 * default destination does, rather than holding ever more lines in memory.
 */
export class LogBatch implements pino.DestinationStream {
  readonly #lines: TurnBatch<string>;
  readonly #writeGathered = () => this.flushSync();

  constructor(destination: pino.DestinationStream) {
    this.#lines = new TurnBatch((lines) => void destination.write(lines.length === 1 ? lines[0]! : lines.join('')));
    process.on('exit', this.#writeGathered);
  }

  write(line: string): void {
    this.#lines.add(line);
  }

  /** Writes what is gathered now (pino's `logger.flush`). */
  flush(cb?: (error?: Error) => void): void {
    this.flushSync();
    cb?.();
  }

  flushSync(): void {
    this.#lines.flush();
  }
}
