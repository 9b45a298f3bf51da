import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.js';

/** How long one request of the runner waits for its answer. */
const REQUEST_TIMEOUT_MS = 15_000;
/** How many times the runner sends a request again after a `429` or a `503` before it gives up. */
const MAX_RETRIES = 8;

/** A request of the runner that could not be made to work: the run stops with exit code 2 (`CannotRun`) or the scenario fails. */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as `Idempotency-Key` (the same on every retry); `POST`s get one of their own when not given. */
  idempotencyKey?: string;
  /** The statuses that are an answer; any other is an error (default: 2xx). */
  expect?: (status: number) => boolean;
  /**
   * A path that counts nothing (a test key's clock, script and card, the versions, the catalogue): answered during a
   * ban and whatever is left of the windows, so it neither waits for the key's gate nor closes it.
   */
  uncounted?: boolean;
}

/**
 * The service, as the conformance runner calls it: over HTTP, as any client. The runner is a good client itself
 * (its requests must fail no check of the child keys' cards): every request pins the newest version, a `POST`
 * carries an `Idempotency-Key` kept across its retries, after a `429` or a `503` every request of that key waits
 * `Retry-After`, and once an answer says nothing is left (`X-RateLimit-Remaining: 0`) the next waits until a window
 * frees a slot (a gate per key): a parent key that many runs share is paced, never banned.
 */
export class Service {
  readonly #pausedUntil = new Map<string, number>();
  version = '';

  constructor(
    readonly url: string,
    private readonly fetcher: typeof fetch,
    private readonly signal: AbortSignal,
    private readonly clock: Clock,
  ) {}

  /** The catalogue, the newest version: read without a key. */
  async open(): Promise<unknown> {
    const versions = (await this.call(undefined, 'GET', '/versions', { uncounted: true })).body as {
      data?: { version: string }[];
    };
    this.version = versions.data?.at(-1)?.version ?? '';
    return (await this.call(undefined, 'GET', '/scenarios', { uncounted: true })).body;
  }

  async call(key: string | undefined, method: string, path: string, options: CallOptions = {}): Promise<Answer> {
    const idempotencyKey = options.idempotencyKey ?? (method === 'POST' ? randomUUID() : undefined);
    const expect = options.expect ?? ((status: number) => status >= 200 && status < 300);
    for (let attempt = 0; ; attempt++) {
      if (!options.uncounted) await this.#gate(key);
      const answer = await this.#send(key, method, path, options.body, idempotencyKey);
      if ((answer.status === 429 || answer.status === 503) && attempt < MAX_RETRIES) {
        const seconds = Number(answer.headers.get('retry-after') ?? '1');
        const until = this.clock() + (Number.isFinite(seconds) ? seconds : 1) * 1000;
        // A throttle of what counts nothing waits this call alone; any other refusal, every request of the key.
        if (options.uncounted) await sleep(until - this.clock(), undefined, { signal: this.signal });
        else this.#pausedUntil.set(key ?? '', until);
        continue;
      }
      // Paced: with nothing left, the key's next request waits until a window frees a slot.
      const full =
        !options.uncounted && answer.headers.get('x-ratelimit-remaining') === '0' ? secondsToRoom(answer.headers) : 0;
      if (full > 0) this.#pausedUntil.set(key ?? '', this.clock() + full * 1000);
      if (!expect(answer.status)) throw new ServiceError(`${method} ${path}: ${said(answer)}`, answer.status);
      return answer;
    }
  }

  async #gate(key: string | undefined): Promise<void> {
    const wait = (this.#pausedUntil.get(key ?? '') ?? 0) - this.clock();
    if (wait > 0) await sleep(wait, undefined, { signal: this.signal });
  }

  async #send(
    key: string | undefined,
    method: string,
    path: string,
    body: unknown,
    idempotencyKey: string | undefined,
  ): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (key !== undefined) headers['x-api-key'] = key;
    if (this.version) headers['petstore-version'] = this.version;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let answer: Response;
    try {
      answer = await this.fetcher(`${this.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.any([this.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
      });
    } catch (error) {
      if (this.signal.aborted) throw error;
      const timedOut = error instanceof Error && error.name === 'TimeoutError';
      throw new ServiceError(
        timedOut
          ? `${method} ${path}: no answer from ${this.url} within ${REQUEST_TIMEOUT_MS / 1000} s`
          : `could not reach ${this.url}: ${reason(error)}`,
      );
    }
    const text = await answer.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: kept as text.
    }
    return { status: answer.status, headers: answer.headers, body: parsed };
  }
}

/** The seconds until a window with nothing left frees a slot: the largest `t` of `RateLimit`'s windows with `r=0`. */
function secondsToRoom(headers: Headers): number {
  const waits = [...(headers.get('ratelimit') ?? '').matchAll(/;r=0;t=(\d+)/g)].map((match) => Number(match[1]));
  return waits.length ? Math.max(...waits) : 1;
}

/** An answer that is not the one expected, in words: its status and its problem's detail. */
function said({ status, body }: Answer): string {
  const problem = (body ?? {}) as { code?: string; detail?: string };
  return `${status}${problem.code ? ` ${problem.code}` : ''}${problem.detail ? `: ${problem.detail}` : ''}`;
}

function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
