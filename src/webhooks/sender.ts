import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { type DestinationPolicy, guardedLookup } from './destinations.js';

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
  /** How many connections each destination may have open. */
  socketsPerOrigin: number;
  /** The wall clock for `Retry-After` dates, and for how long an attempt took. */
  now: () => number;
}

/**
 * Sends webhook deliveries: one `POST`, redirects not followed (a `3xx` is an answer like any other),
 * the answer read to at most `MAX_ANSWER_BYTES`, the whole attempt bounded by `timeoutMs`, and the
 * address connected to checked against the destination policy (./destinations.ts). Connections are
 * kept alive between deliveries to the same receiver.
 */
export class Sender {
  readonly #agents: { http: HttpAgent; https: HttpsAgent };

  constructor(private readonly options: SenderOptions) {
    const agent = { keepAlive: true, maxSockets: options.socketsPerOrigin, lookup: guardedLookup(options.policy) } as const;
    this.#agents = { http: new HttpAgent(agent), https: new HttpsAgent(agent) };
  }

  post(url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Sent> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    return new Promise<Sent>((resolve) => {
      let settled = false;
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
        done({ error: `no answer within ${this.options.timeoutMs / 1000} s` });
      }, this.options.timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) => done({ error: describe(error) }));
      request.on('response', (response) => this.#read(response, (sent) => done(sent)));
      request.end(body);
    });
  }

  close(): void {
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }

  /** Reads the answer to its end or `MAX_ANSWER_BYTES`, whichever comes first; only its status and `Retry-After` count. */
  #read(response: IncomingMessage, done: (sent: Omit<Sent, 'ms'>) => void): void {
    const status = response.statusCode ?? 0;
    const retryAfterMs = retryAfterOf(response.headers['retry-after'], this.options.now());
    const answered = { status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    let read = 0;
    response.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > MAX_ANSWER_BYTES) {
        response.destroy();
        done(answered);
      }
    });
    response.on('end', () => done(answered));
    response.on('error', () => done(answered));
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
