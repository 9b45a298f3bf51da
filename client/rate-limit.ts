/**
 * The rate-limit state a response reports: `X-RateLimit-*` (the binding window), the IETF draft
 * `RateLimit` and `RateLimit-Policy` (every window) and `Retry-After`.
 */

/** One window of `RateLimit` (`r`, `t`), with its quota from `RateLimit-Policy` (`q`, `w`) when sent. */
export interface RateLimitWindow {
  name: string;
  remaining: number;
  /**
   * `t`, in seconds counted from `RateLimitState.at`: with nothing left (`remaining` 0), until one more
   * request is admitted in this window; while some is left, how long the window in effect still runs
   * (draft-ietf-httpapi-ratelimit-headers-11).
   */
  nextInSeconds: number;
  quota?: number;
  windowSeconds?: number;
}

export interface RateLimitState {
  /** The client's clock (ms) when the response arrived: the origin of every relative time here. */
  at: number;
  /** `X-RateLimit-Limit`, `-Remaining`, `-Reset`: the window with the least left. */
  limit?: number;
  remaining?: number;
  reset?: Date;
  windows: RateLimitWindow[];
  retryAfterSeconds?: number;
}

export function parseRateLimit(headers: Headers, at: number): RateLimitState {
  const policies = new Map(structuredList(headers.get('ratelimit-policy')).map((item) => [item.name, item.params]));
  const windows = structuredList(headers.get('ratelimit')).flatMap(({ name, params }) => {
    const remaining = params.get('r');
    if (remaining === undefined) return [];
    const policy = policies.get(name);
    return [
      {
        name,
        remaining,
        nextInSeconds: params.get('t') ?? 0,
        quota: policy?.get('q'),
        windowSeconds: policy?.get('w'),
      },
    ];
  });
  const reset = integer(headers.get('x-ratelimit-reset'));
  return {
    at,
    limit: integer(headers.get('x-ratelimit-limit')),
    remaining: integer(headers.get('x-ratelimit-remaining')),
    reset: reset === undefined ? undefined : new Date(reset * 1000),
    windows,
    retryAfterSeconds: parseRetryAfter(headers.get('retry-after'), at),
  };
}

/** What is left in the tightest window; undefined when the response said nothing about limits. */
export function remainingOf(state: RateLimitState): number | undefined {
  if (state.windows.length > 0) return Math.min(...state.windows.map((w) => w.remaining));
  return state.remaining;
}

/**
 * The client instant from which one more request fits in every window, once `spent` more requests were
 * counted after this state was reported (requests whose answers were lost). A window with nothing left
 * frees a slot in its `t`; so does one that the requests spent emptied, its `t` being then when its
 * oldest counted request leaves it.
 */
export function roomAt(state: RateLimitState, spent = 0): number {
  const full = state.windows.filter((w) => w.remaining <= spent);
  if (full.length > 0) return state.at + 1000 * Math.max(...full.map((w) => w.nextInSeconds));
  // Without the draft header, the binding window's reset is the only hint (an absolute, server-clock time).
  if (state.windows.length === 0 && state.remaining !== undefined && state.remaining <= spent && state.reset)
    return state.reset.getTime();
  return state.at;
}

/** `Retry-After` in seconds: delta-seconds, or an HTTP date measured against `now`. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const seconds = integer(value);
  if (seconds !== undefined) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** The draft headers' form: `"minute";r=59;t=0, "day";r=999;t=0` (no commas inside members). */
function structuredList(value: string | null): { name: string; params: Map<string, number> }[] {
  if (!value) return [];
  return value.split(',').map((member) => {
    const [name = '', ...params] = member.split(';').map((part) => part.trim());
    const numbers = params.flatMap((param) => {
      const [key = '', raw = ''] = param.split('=');
      const n = integer(raw);
      return n === undefined ? [] : [[key.trim(), n] as const];
    });
    return { name: name.replace(/^"|"$/g, ''), params: new Map(numbers) };
  });
}

function integer(value: string | null): number | undefined {
  return value !== null && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined;
}
