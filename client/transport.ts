/**
 * Sends one operation and decides, from each answer, whether and when to send it again. Everything
 * time-related is injected (`fetch`, `now`, `sleep`, `random`), so tests run on a fake clock.
 */
import { type DeprecationHook, deprecationWatcher, warnOnStderr } from './deprecation.js';
import { BannedError, errorFrom, IdempotencyKeyInProgressError, NetworkError, TooManyRequestsError } from './errors.js';
import { ConditionalCache } from './conditional-cache.js';
import { Gate } from './gate.js';
import { parseRateLimit, type RateLimitState } from './rate-limit.js';
import { API_VERSION } from './generated/schema.js';

export type Fetch = (request: Request) => Promise<Response>;

export interface TransportOptions {
  /** Default: the global `fetch`. */
  fetch?: Fetch;
  /** Milliseconds since the epoch. Default: `Date.now`. */
  now?: () => number;
  /** Default: `setTimeout`. */
  sleep?: (ms: number) => Promise<void>;
  /** In [0, 1), for jitter. Default: `Math.random`. */
  random?: () => number;
  /** Wait for room before sending, so that a burst meets no 429. Default: false (paced only after a 429). */
  pace?: boolean;
  /** Attempts per call, the first included. Default: 5. */
  maxAttempts?: number;
  /** Exponential backoff (503, 502, 504, a 409 idempotency-key-in-progress, network errors): `random() * min(cap, base * 2^(attempt-1))`. */
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** Added at random to a 429's `Retry-After`, so that refused clients do not come back together. Default: 1000. */
  retryJitterMs?: number;
  /** The longest the client waits for the rate limit or a ban; longer, it throws instead. Default: 120000. */
  maxWaitMs?: number;
  /** Called once per operation that answers with `Deprecation`/`Sunset`. Default: one line on stderr. */
  onDeprecation?: DeprecationHook;
  /** Called for every response, retried ones included. */
  onResponse?: (event: ResponseEvent) => void;
  /** How many read answers (by URL) are kept to be revalidated with `If-None-Match`; 0 keeps none. Default: 100. */
  cacheSize?: number;
  /**
   * A `Prefer` header for every request. With a test key (`pet_test_…`) the service fails or waits on
   * demand: `fault=503`, `fault=500`, `fault=429`, `fault=reset`, `latency=800`; a live key's are ignored.
   * Default: none.
   */
  prefer?: string;
  /**
   * The `Petstore-Version` of every request. Default: `API_VERSION`, the version the client's types
   * describe. Another version changes what the service answers (see `GET /versions`), not the types.
   */
  version?: string;
}

export interface ResponseEvent {
  operation: string;
  status: number;
  /** 1 for the first attempt of the call. */
  attempt: number;
  rateLimit: RateLimitState;
  requestId?: string;
  /** The service's `Preference-Applied`: the preferences (test keys' faults) this answer applied. */
  preferenceApplied?: string;
}

export interface Call {
  operation: string;
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  /** A list is sent as the parameter repeated (`?type=a&type=b`). */
  query?: Record<string, string | number | readonly (string | number)[] | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Answers that say "not now" rather than "no": retried with backoff, when the method allows it. */
const RETRY_STATUSES = new Set([502, 503, 504]);

export class Transport {
  readonly #options: Required<Omit<TransportOptions, 'onResponse' | 'onDeprecation' | 'prefer'>> & Pick<TransportOptions, 'onResponse' | 'prefer'>;
  readonly #gate: Gate;
  readonly #cache: ConditionalCache;
  readonly #deprecated: (operation: string, headers: Headers) => void;
  #lastRateLimit: RateLimitState | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    options: TransportOptions = {},
  ) {
    this.#options = {
      fetch: (request) => fetch(request),
      now: Date.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      random: Math.random,
      pace: false,
      maxAttempts: 5,
      backoffBaseMs: 500,
      backoffCapMs: 30_000,
      retryJitterMs: 1_000,
      maxWaitMs: 120_000,
      cacheSize: 100,
      version: API_VERSION,
      // An option given as undefined keeps its default.
      ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)),
    };
    this.#gate = new Gate(this.#options);
    this.#cache = new ConditionalCache(this.#options.cacheSize);
    this.#deprecated = deprecationWatcher(options.onDeprecation ?? warnOnStderr);
  }

  /** The rate-limit state of the newest response. */
  get rateLimit(): RateLimitState | undefined {
    return this.#lastRateLimit;
  }

  /** Reads the service answered `304` for a body the client kept: requests that counted nothing. */
  get savedByCache(): number {
    return this.#cache.saved;
  }

  async send<T>(call: Call): Promise<T> {
    const { fetch, now, sleep, random, maxAttempts, maxWaitMs, retryJitterMs } = this.#options;
    // A POST without an Idempotency-Key might be applied twice: it is sent once, whatever happens.
    const retryable = call.method !== 'POST' || call.headers?.['idempotency-key'] !== undefined;
    const url = this.#url(call);
    for (let attempt = 1; ; attempt++) {
      const mayRetry = retryable && attempt < maxAttempts;
      await this.#gate.admit(maxWaitMs);
      let response: Response;
      try {
        response = await fetch(this.#request(call, url));
      } catch (cause) {
        this.#gate.settle(undefined);
        if (!mayRetry) throw new NetworkError(`${call.operation}: no answer from ${this.baseUrl}`, { cause });
        await sleep(this.#backoff(attempt));
        continue;
      }
      const rateLimit = parseRateLimit(response.headers, now());
      this.#observe(call.operation, response, attempt, rateLimit);
      // Not modified: the body kept for this URL is the answer, and the request counted nothing.
      const kept = response.status === 304 ? this.#cache.recall(url) : undefined;
      if (kept !== undefined) {
        this.#gate.settle(rateLimit);
        return JSON.parse(kept) as T;
      }
      const error = response.ok ? undefined : await errorFrom(response, rateLimit);
      // The refusal is told before the gate lets the next request go, so that none goes in between.
      const waitMs = error instanceof TooManyRequestsError ? 1000 * error.retryAfter + random() * retryJitterMs : 0;
      if (error instanceof TooManyRequestsError) this.#gate.refuse(rateLimit.at + waitMs, error instanceof BannedError);
      this.#gate.settle(rateLimit);
      if (!error) return (await this.#read(call, url, response)) as T;
      if (error instanceof TooManyRequestsError) {
        if (mayRetry && waitMs <= maxWaitMs) continue;
      } else if ((RETRY_STATUSES.has(response.status) || error instanceof IdempotencyKeyInProgressError) && mayRetry) {
        // (A 409 idempotency-key-in-progress: the original request is still being processed; its
        // answer comes to a later retry with the same key.)
        // The server's Retry-After, when it sends one, is the least wait; backoff may ask for more.
        await sleep(Math.max(1000 * (rateLimit.retryAfterSeconds ?? 0), this.#backoff(attempt)));
        continue;
      }
      throw error;
    }
  }

  /** Full jitter: anywhere between no wait and the capped exponential. */
  #backoff(attempt: number): number {
    const { random, backoffBaseMs, backoffCapMs } = this.#options;
    return random() * Math.min(backoffCapMs, backoffBaseMs * 2 ** (attempt - 1));
  }

  #observe(operation: string, response: Response, attempt: number, rateLimit: RateLimitState): void {
    this.#lastRateLimit = rateLimit;
    this.#deprecated(operation, response.headers);
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const preferenceApplied = response.headers.get('preference-applied') ?? undefined;
    this.#options.onResponse?.({ operation, status: response.status, attempt, rateLimit, requestId, preferenceApplied });
  }

  /** A read's body, kept with its `ETag` for the next read of the URL. */
  async #read(call: Call, url: string, response: Response): Promise<unknown> {
    const text = await response.text();
    const etag = response.headers.get('etag');
    if (call.method === 'GET' && etag && this.#options.cacheSize > 0) this.#cache.remember(url, etag, text);
    // A 204 (a deletion) has no body.
    return text === '' ? undefined : JSON.parse(text);
  }

  #url({ path, query = {} }: Call): string {
    const url = new URL(`${this.baseUrl.replace(/\/$/, '')}${path}`);
    for (const [name, value] of Object.entries(query)) {
      for (const one of value === undefined ? [] : Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(one));
    }
    return url.href;
  }

  /** A new Request per attempt: a body can be read only once. A read of a URL whose answer is kept asks whether it is still current. */
  #request({ method, body, headers = {} }: Call, url: string): Request {
    const all = new Headers({ accept: 'application/json', 'x-api-key': this.apiKey, ...headers });
    const etag = method === 'GET' ? this.#cache.etagOf(url) : undefined;
    if (etag) all.set('if-none-match', etag);
    if (this.#options.prefer) all.set('prefer', this.#options.prefer);
    all.set('petstore-version', this.#options.version);
    if (body !== undefined) all.set('content-type', 'application/json');
    return new Request(url, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
  }
}
