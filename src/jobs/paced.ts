import { performance } from 'node:perf_hooks';

/** How a job that works in slices shares the event loop with the requests it must not slow. */
export interface Pace {
  /** How long one slice should hold the event loop, in ms: its size follows what the last one took. */
  sliceMs: number;
  /**
   * The most of the time the job takes while there is more to do, when the event loop is otherwise
   * idle (`idleShare`) and when requests keep it busy (`busyShare`); between the two as requests used
   * less of it during the job's last rest. After each slice the job rests for the rest.
   */
  idleShare: number;
  busyShare: number;
  /** The first slice's size, and the bounds of every slice's. */
  first: number;
  min: number;
  max: number;
}

/**
 * Runs `slice(size)` until it answers that nothing is left (false) or `stopped()` says so. Each slice
 * is sized to take about `sliceMs` of the event loop (a synchronous store holds the loop for all of
 * it), and after each the job rests, so that under load it takes at most `busyShare` of the time: a
 * flood of work falls behind, it does not crowd out requests. How busy the loop is comes from Node's
 * event-loop utilisation over the rest, when only others ran.
 */
export async function paced(
  slice: (size: number) => Promise<boolean>,
  pace: Pace,
  stopped: () => boolean = () => false,
): Promise<void> {
  let size = pace.first;
  let share = pace.busyShare;
  for (;;) {
    const began = performance.now();
    const more = await slice(size);
    const took = performance.now() - began;
    if (!more || stopped()) return;
    // Grow at most twofold a step: one fast slice (a cache still warm) does not make the next one long.
    size = Math.round(
      Math.min(pace.max, Math.max(pace.min, Math.min(size * 2, (size * pace.sliceMs) / Math.max(took, 0.01)))),
    );
    const restStarted = performance.eventLoopUtilization();
    await rest((took * (1 - share)) / share);
    // Busy from a quarter of the time on: requests that come and go leave the loop idle in between.
    const busy = Math.min(1, performance.eventLoopUtilization(restStarted).utilization / BUSY_FROM);
    share = pace.busyShare + (pace.idleShare - pace.busyShare) * (1 - busy);
  }
}

/** The event-loop utilisation, by others, from which the loop counts as busy. */
const BUSY_FROM = 0.25;

function rest(ms: number): Promise<void> {
  return new Promise((resolve) => (ms < 1 ? setImmediate(resolve) : setTimeout(resolve, ms)));
}
