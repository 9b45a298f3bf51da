import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { RETRY_AFTER_HEADER } from '../http/responses.js';
import { type InputError, PROBLEM_CONTENT_TYPE, ProblemError, problemBody } from './problems.js';
import { type ProblemSlug } from './problem-types.js';
import { type Phases, setHeaders, type Stage, type Step } from './stages.js';
import { allInputErrors } from './validation.js';

/** Seconds a client should wait before retrying when a store cannot be reached. */
const STORE_RETRY_AFTER_SECONDS = 5;

/** What the service answers when a store it needs cannot be reached: a `503` with `Retry-After`. */
export function storeUnavailable(): ProblemError {
  return new ProblemError(
    'service-unavailable',
    'A store the service needs cannot be reached. Retry shortly.',
    {},
    { [RETRY_AFTER_HEADER]: String(STORE_RETRY_AFTER_SECONDS) },
  );
}

/** What the service answers when it fails in a way it did not foresee: a `500` that says nothing of what failed. */
export function internalError(): ProblemError {
  return new ProblemError('internal-error', 'The service failed to handle the request.');
}

/** Fastify's own client errors, by code, as problems. */
const FASTIFY_CODES: Record<string, [ProblemSlug, string, InputError[]?]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload-too-large', 'The request body is larger than the service accepts.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [
    'unsupported-media-type',
    'Send the body as JSON with Content-Type: application/json.',
  ],
  FST_ERR_CTP_INVALID_JSON_BODY: [
    'invalid-request',
    'The body is not valid JSON.',
    [{ in: 'body', name: '', message: 'is not valid JSON' }],
  ],
  FST_ERR_CTP_EMPTY_JSON_BODY: [
    'invalid-request',
    'The body is empty but Content-Type says JSON.',
    [{ in: 'body', name: '', message: 'is empty' }],
  ],
};

export function sendProblem<R extends FastifyReply>(reply: R, publicUrl: string, problem: ProblemError): R {
  const instance = reply.request.url.split('?')[0] ?? '/';
  const body = problemBody(publicUrl, problem.slug, problem.detail, instance, problem.extras);
  // Serialised here, not by a route's response schema: a problem's members must never be dropped.
  setHeaders(reply.code(problem.status), problem.headers).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
  return reply;
}

/**
 * Every error becomes a problem+json response; a `500` says nothing about what failed. `unreachable`
 * tells an error that means a store cannot be reached now (db/errors.ts): a `503` with `Retry-After`.
 */
export function errorHandler(publicUrl: string, unreachable: (error: unknown) => boolean) {
  return function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const problem = toProblem(error, request, unreachable);
    if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, publicUrl, problem);
  };
}

function toProblem(
  error: FastifyError,
  request: FastifyRequest,
  unreachable: (error: unknown) => boolean,
): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error.validation) {
    const errors = allInputErrors(request, {
      part: error.validationContext ?? 'body',
      errors: error.validation as never,
    });
    const names = [...new Set(errors.map((e) => `${e.in} ${e.name || '(whole body)'}`))].join(', ');
    return new ProblemError('invalid-request', `Invalid input: ${names}.`, { errors });
  }
  const known = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (known) {
    const [slug, detail, errors] = known;
    return new ProblemError(slug, detail, errors ? { errors } : {});
  }
  // A client that stops sending its body fails the body's read with a connection error: that is the
  // client's doing, not a store's (and nobody is left to read the answer).
  if (request.raw.readableAborted)
    return new ProblemError('invalid-request', 'The request body was cut off: the client stopped sending it.', {
      errors: [],
    });
  if (unreachable(error)) return storeUnavailable();
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // Any other client error Fastify detects (a malformed URL, a bad Content-Length, …).
    return new ProblemError('invalid-request', 'The request is malformed.', { errors: [] });
  }
  return internalError();
}

export function notFound(request: Pick<FastifyRequest, 'method' | 'url'>): ProblemError {
  return new ProblemError('not-found', `Nothing is at ${request.method} ${request.url.split('?')[0]}.`);
}

/**
 * A request whose `Expect` the service cannot meet (anything but `100-continue`, which Node answers
 * itself) reaches the app (the server's `checkExpectation` event, ./server.ts) and is refused here,
 * after the limit stage, with its headers.
 */
function refuseUnknownExpectation(request: FastifyRequest): void {
  const expect = request.headers.expect;
  if (expect === undefined || expect.trim().toLowerCase() === '100-continue') return;
  throw new ProblemError(
    'expectation-failed',
    'The service cannot meet this Expect header; the only expectation it knows is 100-continue.',
  );
}

/**
 * An HTTP/1.1 request names its host (RFC 9112 §3.2). Node would answer one without `Host` with a bare
 * `400` of its own (no problem, no request id, no rate-limit headers): the listeners let it through
 * (`requireHostHeader: false`) and this step answers it as every other refusal.
 */
function requireHost(request: FastifyRequest): void {
  if (request.headers.host !== undefined || request.raw.httpVersion !== '1.1') return;
  throw new ProblemError('invalid-request', 'An HTTP/1.1 request must carry a Host header.', {
    errors: [{ in: 'header', name: 'Host', message: 'is required in HTTP/1.1' }],
  });
}

/**
 * A body sent compressed (`Content-Encoding: gzip`, …) is refused as what it is, a `415`, not parsed
 * as broken JSON: the service reads bodies as they are sent. Runs before the body is read, after the path
 * and the method were judged.
 */
function refuseContentEncoding(request: FastifyRequest): void {
  const encoding = request.headers['content-encoding'];
  const hasBody =
    request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  if (!hasBody || encoding === undefined || encoding.trim().toLowerCase() === 'identity') return;
  throw new ProblemError(
    'unsupported-media-type',
    `The body is sent with Content-Encoding ${JSON.stringify(encoding.slice(0, 40))}; send it uncompressed, as JSON.`,
  );
}

/**
 * The edge's checks of what HTTP itself requires, once the request is counted (so that a refusal carries
 * the headers, as every answer does): a `Host`, an `Expect` the service can meet, and, before the body is
 * read, a body it can read.
 */
export const httpChecksStage: Stage = {
  name: 'http-checks',
  forRoute: () => HTTP_CHECKS,
};

const HTTP_CHECKS: Phases = {
  onRequest(request) {
    requireHost(request);
    refuseUnknownExpectation(request);
  },
  beforeBody: refuseContentEncoding,
};

export function notFoundHandler(publicUrl: string) {
  return (request: FastifyRequest, reply: FastifyReply) => sendProblem(reply, publicUrl, notFound(request));
}

/**
 * A URL Fastify cannot even route (bad percent-encoding) skips the hooks; it still goes through the
 * same first steps (request id, identity, rate limit) so that its problem carries the same headers.
 */
export function frameworkErrorHandler(publicUrl: string, steps: Step[], unreachable: (error: unknown) => boolean) {
  // Fastify does not wait for this handler: it answers by itself, and nothing it does rejects.
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void =>
    void answerFrameworkError({ publicUrl, steps, unreachable }, error, request, reply);
}

async function answerFrameworkError(
  { publicUrl, steps, unreachable }: { publicUrl: string; steps: Step[]; unreachable: (error: unknown) => boolean },
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  try {
    for (const step of steps) {
      await step(request, reply);
      // A step may answer by itself (the limit step's 429).
      if (reply.sent) return reply;
    }
  } catch (refusal) {
    return sendProblem(
      reply,
      publicUrl,
      refusal instanceof ProblemError ? refusal : toProblem(refusal as FastifyError, request, unreachable),
    );
  }
  return sendProblem(
    reply,
    publicUrl,
    new ProblemError('invalid-request', `The URL is not valid: ${error.message}`, { errors: [] }),
  );
}
