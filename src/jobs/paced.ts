/** How a job that works in slices shares the event loop with the requests it must not slow. */
export interface Pace {
  /** How long one slice should hold the event loop, in ms: its size follows what the last one took. */
  sliceMs: number;
  /** The most of the time the job takes while there is more to do: after each slice it rests for the rest. */
  share: number;
  /** The first slice's size, and the bounds of every slice's. */
  first: number;
  min: number;
  max: number;
}

/**
 * Runs `slice(size)` until it answers that nothing is left (false) or `stopped()` says so. Each slice
 * is sized to take about `sliceMs` of the event loop (a synchronous store holds the loop for all of
 * it), and after each the job rests so that it takes at most `share` of the time while work remains:
 * a flood of work falls behind, it does not crowd out requests.
 */
export async function paced(slice: (size: number) => Promise<boolean>, pace: Pace, stopped: () => boolean = () => false): Promise<void> {
  let size = pace.first;
  for (;;) {
    const began = performance.now();
    const more = await slice(size);
    const took = performance.now() - began;
    if (!more || stopped()) return;
    // Grow at most twofold a step: one fast slice (a cache still warm) does not make the next one long.
    size = Math.round(Math.min(pace.max, Math.max(pace.min, Math.min(size * 2, (size * pace.sliceMs) / Math.max(took, 0.01)))));
    await rest((took * (1 - pace.share)) / pace.share);
  }
}

function rest(ms: number): Promise<void> {
  return new Promise((resolve) => (ms < 1 ? setImmediate(resolve) : setTimeout(resolve, ms)));
}
