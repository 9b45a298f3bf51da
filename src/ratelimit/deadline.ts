/**
 * How long a call waits for Redis before it is judged late (./failover-store.ts says what follows): a
 * deadline that excuses a busy event loop and a connection working through a queue ours is in.
 */

/** How long a request waits for Redis's reply before it is decided in memory. */
export const COMMAND_TIMEOUT_MS = 100;
/**
 * A timer this late means the event loop was busy, not Redis: the wait starts again. So does a wait in
 * which one Redis answered other commands of the same connection: it works through a queue that ours
 * is in. Either excuse is given at most `MAX_EXCUSES` times to one command.
 */
const BUSY_LOOP_MS = 20;
const MAX_EXCUSES = 4;
export const TIMED_OUT = Symbol('timed out');

/** When a connection last brought a reply (performance.now()): what every command on it shares. */
export interface Answered {
  at: number;
}

/**
 * The reply, or `TIMED_OUT` once it is really late (see `FailoverLimiterStore`, ./failover-store.ts). `answered`: the
 * replies of the connection the command is on, when they come in order (one Redis).
 */
export function withinDeadline<T>(pending: Promise<T>, answered?: Answered): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let excuses = 0;
    let armedAt = performance.now();
    const expire = () =>
      setImmediate(() => {
        if (settled) return;
        const late = performance.now() - armedAt - COMMAND_TIMEOUT_MS;
        const queued = answered !== undefined && answered.at > armedAt;
        if ((late > BUSY_LOOP_MS || queued) && excuses++ < MAX_EXCUSES) {
          armedAt = performance.now();
          timer = setTimeout(expire, COMMAND_TIMEOUT_MS);
          return;
        }
        settled = true;
        resolve(TIMED_OUT);
      });
    let timer = setTimeout(expire, COMMAND_TIMEOUT_MS);
    pending.then(
      (value) => {
        if (answered) answered.at = performance.now();
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
