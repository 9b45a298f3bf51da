import { describe, expect, it } from 'vitest';
import { type Pace, paced } from '../../src/jobs/paced.js';
import { every } from '../../src/jobs/periodic.js';

const pace: Pace = { sliceMs: 1_000, idleShare: 1, busyShare: 1, first: 3, min: 2, max: 5 };

describe('paced', () => {
  it('runs slices until one says nothing is left, each sized within the bounds, growing at most twofold', async () => {
    const sizes: number[] = [];
    let left = 40;
    await paced(async (size) => {
      sizes.push(size);
      left -= size;
      return left > 0;
    }, pace);
    expect(sizes[0]).toBe(3);
    expect(sizes.every((size) => size >= pace.min && size <= pace.max)).toBe(true);
    for (let i = 1; i < sizes.length; i++) expect(sizes[i]!).toBeLessThanOrEqual(sizes[i - 1]! * 2);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(40);
  });

  it('stops after the slice in which it was told to', async () => {
    let slices = 0;
    let stop = false;
    await paced(
      async () => {
        if (++slices === 3) stop = true;
        return true;
      },
      pace,
      () => stop,
    );
    expect(slices).toBe(3);
  });
});

describe('every', () => {
  it('runs at once, never two runs together, and stop waits for the run in progress', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    let release: () => void = () => {};
    const job = every(
      0,
      async () => {
        runs++;
        most = Math.max(most, ++running);
        await new Promise<void>((resolve) => (release = resolve));
        running--;
      },
      () => {},
    );
    expect(runs).toBe(1);
    const stopped = job.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    release();
    await stopped;
    expect([runs, most, running]).toEqual([1, 1, 0]);
  });

  it('hands a failed run to its handler and goes on', async () => {
    const failures: unknown[] = [];
    let runs = 0;
    const job = every(
      0,
      async () => {
        if (++runs === 1) throw new Error('the store is down');
      },
      (error) => failures.push(error),
    );
    await job.first;
    while (runs < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    await job.stop();
    expect(failures).toEqual([new Error('the store is down')]);
  });
});
