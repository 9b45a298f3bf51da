/**
 * The clients of bench/event-streams.ts: the streams' readers (bench/stream-reader.ts, a process of their own) as the
 * bench drives them, and the writer of the orders whose events they read.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { round } from './load.js';
import { postOrder } from './mode-run.js';
import { ROOT } from './service.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ReaderReport {
  latencies: number[];
  frames: number;
  heartbeats: number;
  ended: number;
}

/** The streams' clients: bench/stream-reader.ts in a child process, one command at a time over IPC. */
export class Readers {
  readonly #child: ChildProcess;

  constructor() {
    this.#child = fork(join(ROOT, 'bench/stream-reader.ts'), [], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  }

  ask<T>(command: object): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`the stream reader exited (${code})`));
      this.#child.once('exit', exited);
      this.#child.once('message', (reply) => {
        this.#child.off('exit', exited);
        resolve(reply as T);
      });
      this.#child.send(command);
    });
  }

  /** `perKey` streams of each of `keys`; resolves once each is open (its `retry:` line read) or has failed. */
  open(url: string, keys: string[], perKey: number) {
    return this.ask<{ opened: number; failed: Record<string, number> }>({ do: 'open', url, keys, perKey });
  }

  close() {
    return this.ask<{ closed: number }>({ do: 'close' });
  }

  take() {
    return this.ask<ReaderReport>({ do: 'take' });
  }

  stop(): void {
    if (this.#child.connected) this.#child.disconnect();
  }
}

/** `perSecond` orders a second for `seconds` s over `keys` in turn, each on time, answered or not the last. */
export async function writeOrders(url: string, keys: string[], perSecond: number, seconds: number) {
  const orders = Math.round(perSecond * seconds);
  const statuses: Record<string, number> = {};
  const count = (status: string | number) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
  };
  const answered: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < orders; i++) {
    const wait = started + (i * 1000) / perSecond - performance.now();
    if (wait > 0) await sleep(wait);
    const { method, path, headers, body } = postOrder('/store/orders', keys[i % keys.length]!);
    answered.push(
      fetch(`${url}${path}`, { method, headers: headers as Record<string, string>, body: body as string }).then(
        async (response) => {
          await response.arrayBuffer();
          count(response.status);
        },
        () => count('error'),
      ),
    );
  }
  await Promise.all(answered);
  return { orders, statuses, writeSeconds: round((performance.now() - started) / 1000, 1) };
}
