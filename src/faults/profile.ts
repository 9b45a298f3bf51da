/**
 * A test key's standing fault profile: for soak tests, a share of its requests fail on their own and
 * each waits a while, drawn from a seeded sequence (./draws.ts) so that a run can be replayed. Set with
 * the key (`petstore keys create --test --fault-rate 0.05 --latency 50-400`) or later
 * (`petstore keys set-faults`, `PUT /admin/keys/{id}/faults`).
 */

/** What a test key may ask for with `Prefer: fault=…`, or its profile may draw. */
export const FAULTS = ['503', '500', '429', 'reset'] as const;
export type Fault = (typeof FAULTS)[number];

/** The longest wait a request may ask for, or a profile draw: well inside the service's own timeouts. */
export const MAX_LATENCY_MS = 10_000;
/** Seeds are unsigned 32-bit integers: the state of the seeded sequence (./draws.ts). */
export const MAX_SEED = 2 ** 32 - 1;

export interface FaultProfile {
  /** The share of requests that fail, from 0 to 1. */
  readonly rate: number;
  /** The faults a failing request draws from, each as likely. */
  readonly faults: Fault[];
  /** Every request waits between these many milliseconds (uniformly), or none. */
  readonly latencyMs: { readonly min: number; readonly max: number } | null;
  readonly seed: number;
  /** When the profile was set: its sequence starts again from here (./draws.ts). */
  readonly setAt: string;
}

/** A profile as asked for; what is missing takes its default (every fault, no latency, a random seed). */
export interface FaultProfileInput {
  rate: number;
  faults?: readonly string[];
  latencyMs?: { min: number; max: number } | null;
  seed?: number;
}

export function isFault(value: string): value is Fault {
  return (FAULTS as readonly string[]).includes(value);
}

/** The first thing wrong with a profile asked for, naming its member; undefined when there is none. */
export function profileMistake(
  input: FaultProfileInput,
): { field: 'rate' | 'faults' | 'latencyMs' | 'seed'; message: string } | undefined {
  const { rate, faults, latencyMs, seed } = input;
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1))
    return { field: 'rate', message: 'a fault rate is a number from 0 to 1' };
  if (
    faults !== undefined &&
    (faults.length === 0 || !faults.every(isFault) || new Set(faults).size !== faults.length)
  ) {
    return { field: 'faults', message: `faults are one or more of ${FAULTS.join(', ')}, each once` };
  }
  if (latencyMs) {
    const { min, max } = latencyMs;
    const valid = (n: number) => Number.isSafeInteger(n) && n >= 0 && n <= MAX_LATENCY_MS;
    if (!valid(min) || !valid(max) || min > max) {
      return {
        field: 'latencyMs',
        message: `latency is whole milliseconds from 0 to ${MAX_LATENCY_MS}, its least first`,
      };
    }
  }
  if (seed !== undefined && !(Number.isSafeInteger(seed) && seed >= 0 && seed <= MAX_SEED)) {
    return { field: 'seed', message: `a seed is a whole number from 0 to ${MAX_SEED}` };
  }
  return undefined;
}

/** A checked input as the profile to keep (see `profileMistake`). */
export function profileOf(input: FaultProfileInput, setAt: string, randomSeed: () => number): FaultProfile {
  return {
    rate: input.rate,
    faults: input.faults ? (input.faults as Fault[]) : [...FAULTS],
    latencyMs: input.latencyMs ?? null,
    seed: input.seed ?? randomSeed(),
    setAt,
  };
}

/** `50-400` or `120` (milliseconds), as the CLI takes a latency. */
export function parseLatency(text: string): { min: number; max: number } | undefined {
  const match = /^(\d{1,6})(?:-(\d{1,6}))?$/.exec(text.trim());
  if (!match) return undefined;
  const min = Number(match[1]);
  return { min, max: match[2] === undefined ? min : Number(match[2]) };
}

/** One line for a terminal: `5% of 503, 429; 50-400 ms; seed 42`. */
export function describeProfile(p: FaultProfile): string {
  const latency = p.latencyMs
    ? p.latencyMs.min === p.latencyMs.max
      ? `${p.latencyMs.min} ms`
      : `${p.latencyMs.min}-${p.latencyMs.max} ms`
    : 'no latency';
  return `${+(p.rate * 100).toFixed(4)}% of ${p.faults.join(', ')}; ${latency}; seed ${p.seed}`;
}
