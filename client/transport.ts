/**
 * Sends one operation and decides, from each answer, whether and when to send it again. Everything
 * time-related is injected (`fetch`, `now`, `sleep`, `random`), so tests run on a fake clock. A request
 * carries the API key, or, with client credentials, the access token all the client's callers share.
 */
import { type DeprecationHook, deprecationWatcher, warnOnStderr } from './deprecation.js';
import {
  BannedError,
  errorFrom,
  IdempotencyKeyInProgressError,
  NetworkError,
  SunsetError,
  TooManyRequestsError,
  VersionSunsetError,
} from './errors.js';
import { ConditionalCache } from './conditional-cache.js';
import { Gate } from './gate.js';
import { parseRateLimit, type RateLimitState } from './rate-limit.js';
import { API_VERSION } from './generated/schema.js';
import { Authentication, type Credentials } from './authentication.js';
import type { AccessToken } from './tokens.js';

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
  /**
   * Wait for room before sending: once an answer said nothing is left (`X-RateLimit-Remaining: 0`), no
   * request goes before the `RateLimit` header's `t` (when the window frees a slot), so that a burst
   * meets no 429. Default: true. `false` sends one anyway to see, and paces only after a 429: the
   * request it sends early earns a 429 it was told of (a test key's report card fails `paces`).
   */
  pace?: boolean;
  /** Attempts per call, the first included. Default: 5. */
  maxAttempts?: number;
  /**
   * Exponential backoff (500, 502, 503, 504, a 409 idempotency-key-in-progress,
   * network errors): `random() * min(cap, base * 2^(attempt-1))`.
   */
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
  /** Answered in every version, past its sunset too (the test-mode operations): a version gone does not stop it. */
  everyVersion?: boolean;
  /** A form (`application/x-www-form-urlencoded`) for the body, in place of `body`. */
  form?: Record<string, string>;
  /** Authenticated by the client credentials (HTTP Basic) instead of the key or a token: the token request. */
  asClient?: boolean;
  /** A `POST` that may be sent again after any failure, having no effect a second time could repeat (a token). */
  safe?: boolean;
  /** The `Accept` header. Default: `application/json`. */
  accept?: string;
  /** Aborts the request, and whatever waits for it: the call then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Answers that say "not now" rather than "no": retried with backoff, when the method allows it. A 500
 * too: the service remembers only successes under an `Idempotency-Key`, so a `POST` retried with its
 * key is carried out at most once.
 */
const RETRY_STATUSES = new Set([500, 502, 503, 504]);

export class Transport {
  readonly #options: Required<Omit<TransportOptions, 'onResponse' | 'onDeprecation' | 'prefer'>> &
    Pick<TransportOptions, 'onResponse' | 'prefer'>;
  readonly #gate: Gate;
  readonly #cache: ConditionalCache;
  readonly #deprecated: (operation: string, headers: Headers) => void;
  /** What answered `410`: `operation <id>` or `version <v>`, and the error it answered. */
  readonly #gone = new Map<string, SunsetError>();
  #lastRateLimit: RateLimitState | undefined;
  /** The key, or the shared token, whose request goes through this transport. */
  readonly #auth: Authentication;

  /** @param credentials the API key (`pet_…`), or client credentials, with which requests carry a token. */
  constructor(
    private readonly baseUrl: string,
    credentials: string | Credentials,
    options: TransportOptions = {},
  ) {
    this.#options = {
      fetch: (request) => fetch(request),
      now: Date.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      random: Math.random,
      pace: true,
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
    this.#gate = new Gate({ ...this.#options, look: () => this.#look() });
    this.#cache = new ConditionalCache(this.#options.cacheSize);
    this.#deprecated = deprecationWatcher(options.onDeprecation ?? warnOnStderr);
    this.#auth = new Authentication(credentials, (call) => this.send<AccessToken>(call), this.#options.now);
  }

  /** The rate-limit state of the newest response. */
  get rateLimit(): RateLimitState | undefined {
    return this.#lastRateLimit;
  }

  /** Reads the service answered `304` for a body the client kept: requests that counted nothing. */
  get savedByCache(): number {
    return this.#cache.saved;
  }

  /**
   * Forgets what answered `410`, so that it is asked for again: after a test key's reset
   * (`DELETE /test-data`) put its clock back before the sunsets. A `410` is for good otherwise.
   */
  forgetGone(): void {
    this.#gone.clear();
  }

  async send<T>(call: Call): Promise<T> {
    const url = this.#url(call);
    const answer = await this.#exchange(call, url);
    // Not modified: the body kept for this URL is the answer.
    if ('kept' in answer) return JSON.parse(answer.kept) as T;
    return (await this.#read(call, url, answer.response)) as T;
  }

  /**
   * Sends `call` as `send` does (its gate, retries, token), and answers its successful response with the body unread:
   * a stream, read as it comes (./event-stream.ts). Its request counts toward the key's limits when it is answered;
   * nothing is kept for a later `If-None-Match`.
   */
  async open(call: Call): Promise<Response> {
    const answer = await this.#exchange(call, this.#url(call));
    // (A stream's URL has no body kept, so no If-None-Match goes with it: never a 304.)
    if ('kept' in answer) throw new TypeError(`${call.operation}: a stream answered 304 Not Modified`);
    return answer.response;
  }

  /** The client's wait (its `sleep` option): what a stream's reconnection waits with. */
  sleep(ms: number): Promise<void> {
    return this.#options.sleep(ms);
  }

  /** The successful answer of `call`, its body unread; or the body kept for its URL, when it answered 304. */
  async #exchange(call: Call, url: string): Promise<{ response: Response } | { kept: string }> {
    const { fetch, now, sleep, random, maxAttempts, maxWaitMs, retryJitterMs, version } = this.#options;
    // A 410 is for good: what is gone is not asked for again (an operation past its sunset, or every
    // operation of a version past its sunset but those answered in every version).
    const gone =
      this.#gone.get(`operation ${call.operation}`) ??
      (call.everyVersion ? undefined : this.#gone.get(`version ${version}`));
    if (gone) throw goneAgain(call.operation, gone);
    // A POST without an Idempotency-Key might be applied twice: it is sent once, whatever happens.
    const retryable = call.method !== 'POST' || call.safe === true || call.headers?.['idempotency-key'] !== undefined;
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      const mayRetry = retryable && attempt < maxAttempts;
      const token = await this.#auth.tokenFor(call);
      await this.#gate.admit(maxWaitMs);
      let response: Response;
      try {
        response = await fetch(this.#request(call, url, token));
      } catch (cause) {
        this.#gate.settle(undefined);
        // Stopped by the caller: nothing to retry.
        if (call.signal?.aborted) throw call.signal.reason;
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
        return { kept };
      }
      const error = response.ok ? undefined : await errorFrom(response, rateLimit);
      // The refusal is told before the gate lets the next request go, so that none goes in between.
      const waitMs = error instanceof TooManyRequestsError ? 1000 * error.retryAfter + random() * retryJitterMs : 0;
      if (error instanceof TooManyRequestsError) this.#gate.refuse(rateLimit.at + waitMs, error instanceof BannedError);
      this.#gate.settle(rateLimit);
      if (!error) return { response };
      // A token refused (expired, in the key's time): renewed once for every caller, and this request sent again
      // with the new one, whatever its method (a refused request was not carried out); never the refused one.
      if (!renewed && this.#auth.refused(response, token)) {
        renewed = true;
        continue;
      }
      if (error instanceof SunsetError)
        this.#gone.set(
          error instanceof VersionSunsetError ? `version ${version}` : `operation ${call.operation}`,
          error,
        );
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

  /**
   * Where the key's windows stand, from the headers of `GET /usage`, which counts nothing toward them. Asked while
   * the gate waits for it: never with a new token, whose request would wait behind it.
   */
  async #look(): Promise<RateLimitState> {
    const { fetch, now, version } = this.#options;
    const headers = { accept: 'application/json', ...this.#auth.headersNow(), 'petstore-version': version };
    const response = await fetch(new Request(`${this.baseUrl.replace(/\/$/, '')}/usage`, { headers }));
    await response.body?.cancel();
    return parseRateLimit(response.headers, now());
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
    this.#options.onResponse?.({
      operation,
      status: response.status,
      attempt,
      rateLimit,
      requestId,
      preferenceApplied,
    });
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
      for (const one of value === undefined ? [] : Array.isArray(value) ? value : [value])
        url.searchParams.append(name, String(one));
    }
    return url.href;
  }

  /**
   * A new Request per attempt: a body can be read only once. A read
   * of a URL whose answer is kept asks whether it is still current.
   */
  #request(call: Call, url: string, token: string | undefined): Request {
    const { method, body, form, headers = {}, accept = 'application/json', signal } = call;
    const all = new Headers({ accept, ...headers, ...this.#auth.headers(token, call) });
    const etag = method === 'GET' ? this.#cache.etagOf(url) : undefined;
    if (etag) all.set('if-none-match', etag);
    if (this.#options.prefer) all.set('prefer', this.#options.prefer);
    all.set('petstore-version', this.#options.version);
    if (form !== undefined) {
      all.set('content-type', 'application/x-www-form-urlencoded');
      return new Request(url, { method, headers: all, body: new URLSearchParams(form).toString(), signal });
    }
    if (body !== undefined) all.set('content-type', 'application/json');
    const json = body === undefined ? undefined : JSON.stringify(body);
    return new Request(url, { method, headers: all, body: json, signal });
  }
}

/**
 * The error of a call not sent because what it asks for answered `410` before: the same class, problem and request id.
 */
function goneAgain(operation: string, first: SunsetError): SunsetError {
  const Gone = first.constructor as typeof SunsetError;
  const what = first instanceof VersionSunsetError ? 'its version is' : `${operation} is`;
  const message = `Not sent: ${what} gone (410${first.requestId ? `, request ${first.requestId}` : ''}): ${first.message}`;
  return new Gone(message, {
    status: first.status,
    problem: first.problem,
    requestId: first.requestId,
    rateLimit: first.rateLimit,
  });
}
