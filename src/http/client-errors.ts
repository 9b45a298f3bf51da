import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressRefusals } from './connections.js';
import { ALLOW_ORIGIN_HEADER } from './cors.js';
import { CLOSE_ABOVE } from './pipelining.js';
import { PROBLEM_CONTENT_TYPE, ProblemError, problemBody } from './problems.js';
import { type ProblemSlug } from './problem-types.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { RETRY_AFTER_HEADER } from './responses.js';

/** What Node's HTTP parser refuses, by its error code; anything else it refuses is a plain `400`. */
function problemOf(code: string | undefined): ProblemError {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new ProblemError('request-timeout', 'The request did not arrive in time; the connection is closed.');
  if (code === 'HPE_HEADER_OVERFLOW')
    return new ProblemError('headers-too-large', 'The request headers are larger than the service accepts.');
  return new ProblemError('invalid-request', 'The request is not valid HTTP.', { errors: [] });
}

/**
 * Requests Node's parser refuses (malformed, headers too large, too slow) never reach the app. They
 * are answered in the same form as everything else: a problem, with the rate-limit headers of the
 * client's address (a peek: what could not be read is not counted), then the connection is closed.
 */
export function clientErrorHandler(publicUrl: string, headersOf: UnreadHeaders) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    answerOnSocket(socket, { publicUrl, headersOf }, problemOf(error.code));
  };
}

/**
 * `CONNECT` (the server's `connect` event: Node hands the socket over instead of a request) is for
 * proxies, which this service is not: a `405` problem with the address's rate-limit headers, then the
 * connection is closed. Without this Node would close it with no answer at all.
 */
export function connectHandler(publicUrl: string, headersOf: UnreadHeaders) {
  return (_request: unknown, socket: Socket): void => {
    answerOnSocket(
      socket,
      { publicUrl, headersOf },
      new ProblemError('method-not-allowed', 'CONNECT is not supported: the service is not a proxy.'),
    );
  };
}

/**
 * Connections an address may not open now (./connections.ts): a `429` problem with the address's
 * rate-limit headers, before any request is read, then the connection is closed.
 */
export function addressRefusals(
  publicUrl: string,
  headersOf: UnreadHeaders,
  perAddress: number,
  counted: (slug: ProblemSlug) => void,
): AddressRefusals {
  const to = { publicUrl, headersOf };
  return {
    crowded(socket) {
      counted('too-many-connections');
      const detail = `An address may hold ${perAddress} connections at once; close some, or reuse them (keep-alive).`;
      answerOnSocket(
        socket,
        to,
        new ProblemError('too-many-connections', detail, {}, { [RETRY_AFTER_HEADER]: '1' }),
        DESTROY,
      );
    },
    flooding(socket, retryAfterS) {
      counted('pipelining-flood');
      const detail =
        `A connection from this address sent more than ${CLOSE_ABOVE} requests without reading their answers; its ` +
        `connections are refused for ${retryAfterS} more seconds.`;
      answerOnSocket(
        socket,
        to,
        new ProblemError('pipelining-flood', detail, {}, { [RETRY_AFTER_HEADER]: String(retryAfterS) }),
        DESTROY,
      );
    },
  };
}

/**
 * A connection refused before Node's HTTP server saw it is nobody else's to close, and a client that
 * sends without reading (or never closes its side) would hold it open: it is destroyed once the answer
 * reached the kernel. The others are ended, and Node closes them.
 */
const DESTROY = true;

/**
 * The headers of an answer given before a request could be read, to a client at `address`: what every
 * answer carries (its `Petstore-Version`) and the address's rate-limit headers, looked at without
 * counting (ratelimit/stage.ts `unreadAnswerHeaders`). Never rejects.
 */
export type UnreadHeaders = (address: string) => Promise<Readonly<Record<string, string>>>;

interface SocketAnswers {
  publicUrl: string;
  headersOf: UnreadHeaders;
}

function answerOnSocket(
  socket: Socket,
  { publicUrl, headersOf }: SocketAnswers,
  problem: ProblemError,
  destroy = false,
): void {
  void headersOf(socket.remoteAddress ?? 'unknown').then((headers) =>
    answer(socket, publicUrl, problem, headers, destroy),
  );
}

function answer(
  socket: Socket,
  publicUrl: string,
  problem: ProblemError,
  limits: Readonly<Record<string, string>>,
  destroy: boolean,
): void {
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
