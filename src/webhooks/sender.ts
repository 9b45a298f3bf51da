import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import {
  addressOf,
  type DestinationPolicy,
  destinationRefused,
  guardedLookup,
  isPublicAddress,
} from './destinations.js';

/** The most of a receiver's answer that is read: the rest is not waited for. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** What one attempt came to. */
export interface Sent {
  /** The receiver's status, when it answered. */
  status?: number;
  /** Why there was no answer. */
  error?: string;
  /** Its `Retry-After`, in ms, when it sent one. */
  retryAfterMs?: number;
  ms: number;
}

export interface SenderOptions {
  timeoutMs: number;
  policy: DestinationPolicy;
  /** The wall clock for `Retry-After` dates, and for how long an attempt took. */
  now: () => number;
}

/**
 * Sends webhook deliveries: one `POST`, redirects not followed (a `3xx` is an answer like any other),
 * the whole attempt bounded by `timeoutMs` from the moment it starts connecting, and the address
 * connected to checked against the destination policy (./destinations.ts) before any connection,
 * whether the URL names a host or an address. The status decides: the answer's body is read to at
 * most `MAX_ANSWER_BYTES` or until the timeout, then the connection is dropped, and a body that
 * trickles costs the attempt nothing. Connections are kept alive between deliveries to the same
 * receiver, and an attempt never waits for another's: the agents hold no cap on sockets, as the
 * dispatcher bounds how many attempts run (each key's share, and each endpoint's within it).
 */
export class Sender {
  readonly #agents: { http: HttpAgent; https: HttpsAgent };

  constructor(private readonly options: SenderOptions) {
    const agent = { keepAlive: true, lookup: guardedLookup(options.policy) } as const;
    this.#agents = { http: new HttpAgent(agent), https: new HttpsAgent(agent) };
  }

  /** One attempt, cut `timeoutMs` after it starts connecting (the sender's own timeout unless given). */
  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    signal?: AbortSignal,
    timeoutMs = this.options.timeoutMs,
  ): Promise<Sent> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const literal = addressOf(new URL(url));
    if (literal !== undefined && !this.options.policy.allowPrivate && !isPublicAddress(literal)) {
      return Promise.resolve({ error: describe(destinationRefused()), ms: ms() });
    }
    return new Promise<Sent>((resolve) => {
      let settled = false;
      /** The status and `Retry-After`, once the answer's head arrived: from then on, the attempt's outcome. */
      let answered: Omit<Sent, 'ms'> | undefined;
      const done = (sent: Omit<Sent, 'ms'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...sent, ms: ms() });
      };
      const https = url.startsWith('https:');
      const request = (https ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        agent: https ? this.#agents.https : this.#agents.http,
        headers: { ...headers, 'content-length': Buffer.byteLength(body), 'user-agent': 'Petstore-Webhooks/1.0' },
        signal,
      });
      const timer = setTimeout(() => {
        request.destroy();
        done(answered ?? { error: `no answer within ${Math.round(timeoutMs / 100) / 10} s` });
      }, timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => done(answered ?? { error: describe(error) }));
      request.on('response', (response) => {
        answered = this.#answerOf(response);
        this.#drain(response, () => done(answered!));
      });
      request.end(body);
    });
  }

  close(): void {
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }

  /** What counts of an answer: its status and `Retry-After`. */
  #answerOf(response: IncomingMessage): Omit<Sent, 'ms'> {
    const retryAfterMs = retryAfterOf(response.headers['retry-after'], this.options.now());
    return { status: response.statusCode ?? 0, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }

  /** Reads the answer to its end or `MAX_ANSWER_BYTES`, whichever comes first (the timeout cuts a slower one). */
  #drain(response: IncomingMessage, done: () => void): void {
    let read = 0;
    response.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > MAX_ANSWER_BYTES) {
        response.destroy();
        done();
      }
    });
    response.on('end', done);
    response.on('error', done);
  }
}

/** `Retry-After` in ms: whole seconds, or an HTTP date. */
export function retryAfterOf(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function describe(error: NodeJS.ErrnoException): string {
  if (error.code === 'EDESTINATION') return error.message;
  if (error.name === 'AbortError') return 'the service stopped during the attempt';
  return `${error.code ?? 'error'}: ${error.message}`.slice(0, 200);
}
