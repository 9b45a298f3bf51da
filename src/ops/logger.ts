import type { FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';

/** Anything shaped like an API key, wherever it turns up (a client may put one in a URL). */
const KEY_LIKE = /pet_[A-Za-z0-9_-]+/g;

export function maskKeys(text: string): string {
  return text.replace(KEY_LIKE, 'pet_[redacted]');
}

/**
 * JSON logs on stdout. Keys and the admin token never reach them: headers are not logged, URLs are masked.
 * Lines are written asynchronously (what arrives while a write is under way goes out with the next one),
 * so that an access line per request does not cost a system call per request; `flush` before exiting.
 * Tests pass a destination of their own.
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination({ dest: 1, sync: false })): Logger {
  const options = {
    level,
    serializers: {
      req: (request: FastifyRequest) => ({ method: request.method, url: maskKeys(request.url), remoteAddress: request.ip }),
    },
    redact: { paths: ['req.headers', 'headers', '*.authorization', '*["x-api-key"]'], remove: true },
  };
  return pino(options, destination);
}
