/** The rate-limit headers of every response. Header names are written down here and nowhere else. */
import { fieldName } from '../http/field-name.js';
import { RETRY_AFTER_HEADER } from '../http/responses.js';
import { DAY_MS, MINUTE_MS } from './state.js';
import { bindingWindow, ceilSeconds, type Verdict, type WindowStatus } from './verdict.js';

export const LIMIT_HEADER = 'X-RateLimit-Limit';
export const REMAINING_HEADER = 'X-RateLimit-Remaining';
export const RESET_HEADER = 'X-RateLimit-Reset';
export const POLICY_HEADER = 'RateLimit-Policy';
export const RATE_LIMIT_HEADER = 'RateLimit';
/** Every header the limit step may send. */
export const RATE_LIMIT_HEADER_NAMES = [
  LIMIT_HEADER,
  REMAINING_HEADER,
  RESET_HEADER,
  POLICY_HEADER,
  RATE_LIMIT_HEADER,
  RETRY_AFTER_HEADER,
] as const;
/** The names as set on an answer (http/field-name.ts), and each one's name as written down. */
const [LIMIT, REMAINING, RESET, POLICY, RATE_LIMIT, RETRY_AFTER] = RATE_LIMIT_HEADER_NAMES.map(fieldName);
const WRITTEN = new Map(RATE_LIMIT_HEADER_NAMES.map((name) => [fieldName(name), name]));

/** Headers as a list: name, value, name, value… */
export type HeaderList = (string | number)[];

/**
 * The X-RateLimit-* headers describe the binding window (the one with the least left; on a tie, the
 * day); RateLimit-Policy and RateLimit describe both. `Retry-After` is added to refusals only.
 */
export function rateLimitHeaders(verdict: Verdict): Record<string, string> {
  const list: string[] = [];
  pushRateLimitHeaders(list, verdict);
  const headers: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) headers[WRITTEN.get(list[i]!)!] = list[i + 1]!;
  return headers;
}

/**
 * `rateLimitHeaders`, appended to a header list (name, value, …) instead of built as an object.
 * `offsetMs`: how far the caller's clock is ahead of the real time (a test key's:
 * docs/testing-clients.md#testing-your-client-in-seconds): the waits stay in its time, and `X-RateLimit-Reset` is the
 * real now plus the wait.
 */
export function pushRateLimitHeaders(list: HeaderList, verdict: Verdict, offsetMs = 0): void {
  const binding = verdict[bindingWindow(verdict)];
  const bannedUntil = verdict.kind === 'banned' || verdict.kind === 'peek' ? verdict.bannedUntil : undefined;
  // `t` (draft-ietf-httpapi-ratelimit-headers-11): the window in effect while quota remains, else the
  // wait for the next slot. During a ban nothing is left in any window until the ban ends.
  const item = (status: WindowStatus): string =>
    bannedUntil !== undefined
      ? `r=0;t=${ceilSeconds(bannedUntil - verdict.at)}`
      : `r=${status.remaining};t=${ceilSeconds(status.remaining > 0 ? status.windowMs : status.nextAdmitInMs)}`;
  // On a 429 the policy that refused comes first. Joined, not concatenated: see `policyText`.
  const minute = `"minute";${item(verdict.minute)}`;
  const day = `"day";${item(verdict.day)}`;
  const dayFirst = verdict.kind === 'rate-limited' && verdict.window === 'day';
  list.push(
    LIMIT!,
    String(binding.limit),
    REMAINING!,
    String(bannedUntil === undefined ? binding.remaining : 0),
    RESET!,
    String(ceilSeconds((bannedUntil ?? binding.resetAt) - offsetMs)),
    POLICY!,
    policyText(verdict.minute.limit, verdict.day.limit),
    RATE_LIMIT!,
    (dayFirst ? [day, minute] : [minute, day]).join(', '),
  );
  if (verdict.kind === 'rate-limited' || verdict.kind === 'banned')
    list.push(RETRY_AFTER!, String(verdict.retryAfterSeconds));
}

let lastPolicy = { minute: NaN, day: NaN, text: '' };

/**
 * `RateLimit-Policy`, kept for the last pair of limits. A long string built with `+` or a template is
 * a rope in V8 (a ConsString) until something flattens it, and `node:http` checks every header value
 * with a regular expression, which V8 runs on a rope through its runtime, not on its fast path for a flat
 * string (docs/performance.md#what-counting-instructions-found). A kept string is flattened once, by its first check;
 * `RateLimit`, which changes at every request, is joined from an array, which V8 builds flat.
 */
function policyText(minute: number, day: number): string {
  if (minute !== lastPolicy.minute || day !== lastPolicy.day) {
    lastPolicy = { minute, day, text: `"minute";q=${minute};w=${MINUTE_MS / 1000}, "day";q=${day};w=${DAY_MS / 1000}` };
  }
  return lastPolicy.text;
}
