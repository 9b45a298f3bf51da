import { AT_ONCE_MS, FIXED_PACE_MS, FIXED_PACE_SHARE } from './checks.js';

/**
 * The rule of `backs-off` (docs/testing-clients.md#is-my-client-a-good-api-citizen), over the waits of a request's
 * repeats, each from the failed answer to the repeat's arrival: what went wrong, in words, or undefined when they
 * backed off. At once: every wait within AT_ONCE_MS. A fixed pace: the waits differ by no more than FIXED_PACE_MS
 * plus FIXED_PACE_SHARE of the shortest. Exponential waits with full or equal jitter pass in at least
 * 999 of 1,000 runs; repeats at once or at a fixed interval never do (test/report-card/backs-off.test.ts).
 */
export function backOffFault(waits: readonly number[]): string | undefined {
  const longest = Math.max(...waits);
  const shortest = Math.min(...waits);
  const listed = waits.map((ms) => `${Math.round(ms)} ms`).join(', ');
  if (longest <= AT_ONCE_MS) return `at once (waits ${listed})`;
  if (longest - shortest <= FIXED_PACE_MS + FIXED_PACE_SHARE * shortest) return `at a fixed pace (waits ${listed})`;
  return undefined;
}
