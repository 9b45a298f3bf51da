import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { Phases, Stage } from '../http/stages.js';

/** What the access line says of a request. */
export interface AccessedRequest {
  id: string;
  method: string;
  url: string;
  ip: string | undefined;
}

const { streamSym, chindingsSym, serializersSym } = pino.symbols;

/**
 * The access line, one per request when it is answered: the line
 * `logger.info({ reqId, req, statusCode, responseTime }, 'request completed')` writes, field for
 * field, with the logger's own `req` serialiser (which hides secrets in URLs) and bindings, written
 * straight to its destination. pino's generic serialisation of that object was a large share of an
 * admitted request at LOG_LEVEL=info (docs/performance.md#logging); test/ops/access-log.test.ts
 * holds the two lines equal.
 */
export function accessLog(
  logger: FastifyBaseLogger,
): (request: AccessedRequest, statusCode: number, ms: number) => void {
  // The logger is pino's (ops/logger.ts); Fastify's type shows less of it.
  const pinoLogger = logger as unknown as pino.Logger;
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[streamSym] as { write(line: string): void };
  const bindings = internals[chindingsSym] as string;
  const serializeReq = (internals[serializersSym] as { req: (request: AccessedRequest) => object }).req;
  return (request, statusCode, ms) => {
    if (!pinoLogger.isLevelEnabled('info')) return;
    const req = JSON.stringify(serializeReq(request));
    // `time` is the logger's own stamp (pino's Date.now()), not the service's clock: kept byte for byte.
    stream.write(
      `{"level":30,"time":${Date.now()}${bindings},"reqId":${JSON.stringify(request.id)},"req":${req},"statusCode":${statusCode},"responseTime":${ms},"msg":"request completed"}\n`,
    );
  };
}

/**
 * The access line's stage: one line a request when it is answered (instead of Fastify's two), and one, at
 * info, for a client gone before its answer (an upload cut off: nothing failed here). Nothing without a logger.
 */
export function accessLogStage(logger: FastifyBaseLogger | false): Stage {
  if (!logger) return { name: 'access-log', forRoute: () => ({}) };
  const access = accessLog(logger);
  const phases: Phases = {
    onResponse: (request, reply) => access(request, reply.statusCode, reply.elapsedTime),
    onRequestAbort: (request) => logger.info({ reqId: request.id, req: request }, 'request aborted by the client'),
  };
  return { name: 'access-log', forRoute: () => phases };
}
