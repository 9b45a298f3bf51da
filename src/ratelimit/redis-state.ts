/** The fields of a caller's state in Redis, in the order the script packs them (each a double, little-endian). */
export const LIMITER_STATE_FIELDS = [
  'day',
  'count',
  'until',
  'level',
  'lastEnd',
  'seq',
  'rejEnd',
  'exp',
  'mtot',
  'mbase',
  'mfirst',
  'mlast',
  'lexp',
  'mhead',
  'wend',
  'rreal',
  'rconn',
  'rmark',
] as const;

/** How many fields the packed state had before the ban rule's wait (`wend`) and in-flight answer (`r…`) joined it. */
export const LIMITER_STATE_FIELDS_BEFORE_WAITS = 14;

/**
 * A caller's state as the script keeps it in Redis, read (for tests
 * and the bench: the service only ever reads it in the script).
 */
export function readLimiterState(packed: Buffer): Record<(typeof LIMITER_STATE_FIELDS)[number], number> {
  return Object.fromEntries(LIMITER_STATE_FIELDS.map((field, i) => [field, packed.readDoubleLE(8 * i)])) as Record<
    (typeof LIMITER_STATE_FIELDS)[number],
    number
  >;
}
