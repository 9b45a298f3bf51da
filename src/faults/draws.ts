import type { Fault, FaultProfile } from './profile.js';

/**
 * The seeded sequence a test key's profile draws from. Each request of the key draws three numbers in
 * turn (does it fail, with which fault, how long it waits), so the n-th request since the profile was
 * set meets the n-th draw, whatever the earlier ones were: the same seed and the same requests, on one
 * instance, replay the same faults. Setting the profile again (even unchanged) starts the sequence
 * over; so does a restart. Each instance keeps its own place in the sequence.
 */
export class FaultDraws {
  readonly #sequences = new Map<string, { setAt: string; next: () => number }>();

  constructor(private readonly max = 10_000) {}

  /** The next draw of `key`'s sequence. */
  next(key: string, profile: FaultProfile): { fault?: Fault; latencyMs: number } {
    let sequence = this.#sequences.get(key);
    if (!sequence || sequence.setAt !== profile.setAt) {
      if (!sequence && this.#sequences.size >= this.max) this.#sequences.delete(this.#sequences.keys().next().value!);
      sequence = { setAt: profile.setAt, next: seeded(profile.seed) };
      this.#sequences.set(key, sequence);
    }
    return draw(sequence.next, profile);
  }
}

/** One request's draw from a sequence. */
export function draw(
  next: () => number,
  { rate, faults, latencyMs }: FaultProfile,
): { fault?: Fault; latencyMs: number } {
  const [fails, which, wait] = [next(), next(), next()];
  const latency = latencyMs ? latencyMs.min + Math.floor(wait * (latencyMs.max - latencyMs.min + 1)) : 0;
  return fails < rate
    ? { fault: faults[Math.floor(which * faults.length)]!, latencyMs: latency }
    : { latencyMs: latency };
}

/** Mulberry32: a small, fast generator of 32-bit state; numbers in [0, 1). */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
