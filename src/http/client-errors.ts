import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { addressCaller } from '../ratelimit/callers.js';
import { RETRY_AFTER_HEADER, rateLimitHeaders } from '../ratelimit/headers.js';
import { ANONYMOUS_POLICY } from '../ratelimit/plans.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { AddressRefusals } from './connections.js';
import { ALLOW_ORIGIN_HEADER } from './cors.js';
import { CLOSE_ABOVE } from './pipelining.js';
import { PROBLEM_CONTENT_TYPE, ProblemError, type ProblemSlug, problemBody } from './problems.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/** What Node's HTTP parser refuses, by its error code; anything else it refuses is a plain `400`. */
function problemOf(code: string | undefined): ProblemError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ProblemError('request-timeout', 'The request did not arrive in time; the connection is closed.');
  if (code === 'HPE_HEADER_OVERFLOW') return new ProblemError('headers-too-large', 'The request headers are larger than the service accepts.');
  return new ProblemError('invalid-request', 'The request is not valid HTTP.', { errors: [] });
}

/**
 * Requests Node's parser refuses (malformed, headers too large, too slow) never reach the app. They
 * are answered in the same form as everything else: a problem, with the rate-limit headers of the
 * client's address (a peek: what could not be read is not counted), then the connection is closed.
 */
export function clientErrorHandler(publicUrl: string, limiter: LimiterStore, always: AnswerHeaders) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    answerOnSocket(socket, { publicUrl, limiter, always }, problemOf(error.code));
  };
}

/**
 * `CONNECT` (the server's `connect` event: Node hands the socket over instead of a request) is for
 * proxies, which this service is not: a `405` problem with the address's rate-limit headers, then the
 * connection is closed. Without this Node would close it with no answer at all.
 */
export function connectHandler(publicUrl: string, limiter: LimiterStore, always: AnswerHeaders) {
  return (_request: unknown, socket: Socket): void => {
    answerOnSocket(socket, { publicUrl, limiter, always }, new ProblemError('method-not-allowed', 'CONNECT is not supported: the service is not a proxy.'));
  };
}

/**
 * Connections an address may not open now (./connections.ts): a `429` problem with the address's
 * rate-limit headers, before any request is read, then the connection is closed.
 */
export function addressRefusals(
  publicUrl: string,
  limiter: LimiterStore,
  always: AnswerHeaders,
  perAddress: number,
  counted: (slug: ProblemSlug) => void,
): AddressRefusals {
  const to = { publicUrl, limiter, always };
  return {
    crowded(socket) {
      counted('too-many-connections');
      const detail = `An address may hold ${perAddress} connections at once; close some, or reuse them (keep-alive).`;
      answerOnSocket(socket, to, new ProblemError('too-many-connections', detail, {}, { [RETRY_AFTER_HEADER]: '1' }), DESTROY);
    },
    flooding(socket, retryAfterS) {
      counted('pipelining-flood');
      const detail = `A connection from this address sent more than ${CLOSE_ABOVE} requests without reading their answers; its connections are refused for ${retryAfterS} more seconds.`;
      answerOnSocket(socket, to, new ProblemError('pipelining-flood', detail, {}, { [RETRY_AFTER_HEADER]: String(retryAfterS) }), DESTROY);
    },
  };
}

/**
 * A connection refused before Node's HTTP server saw it is nobody else's to close, and a client that
 * sends without reading (or never closes its side) would hold it open: it is destroyed once the answer
 * reached the kernel. The others are ended, and Node closes them.
 */
const DESTROY = true;

/** Headers that every answer carries, also those answered before a request could be read (its `Petstore-Version`). */
export type AnswerHeaders = Readonly<Record<string, string>>;

interface SocketAnswers {
  publicUrl: string;
  limiter: LimiterStore;
  always: AnswerHeaders;
}

function answerOnSocket(socket: Socket, { publicUrl, limiter, always }: SocketAnswers, problem: ProblemError, destroy = false): void {
  limiter.peek(addressCaller(socket.remoteAddress ?? 'unknown'), ANONYMOUS_POLICY).then(
    (verdict) => answer(socket, publicUrl, problem, { ...always, ...rateLimitHeaders(verdict) }, destroy),
    () => answer(socket, publicUrl, problem, always, destroy),
  );
}

function answer(socket: Socket, publicUrl: string, problem: ProblemError, limits: Record<string, string>, destroy: boolean): void {
  if (!socket.writable) return void socket.destroy();
  // No request line could be read, so there is no path to name.
  const body = JSON.stringify(problemBody(publicUrl, problem.slug, problem.detail, '', problem.extras));
  const headers = {
    ...limits,
    ...problem.headers,
    [REQUEST_ID_HEADER]: randomUUID(),
    [ALLOW_ORIGIN_HEADER]: '*',
    'Content-Type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const text = `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n${head}\r\n${body}`;
  if (destroy) socket.end(text, () => socket.destroy());
  else socket.end(text);
}
