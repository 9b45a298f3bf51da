import type { FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';

/** Anything shaped like an API key, wherever it turns up (a client may put one in a URL). */
const KEY_LIKE = /pet_[A-Za-z0-9_-]+/g;

export function maskKeys(text: string): string {
  return text.replace(KEY_LIKE, 'pet_[redacted]');
}

/** JSON logs on stdout. Keys and the admin token never reach them: headers are not logged, URLs are masked. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    serializers: {
      req: (request: FastifyRequest) => ({ method: request.method, url: maskKeys(request.url), remoteAddress: request.ip }),
    },
    redact: { paths: ['req.headers', 'headers', '*.authorization', '*["x-api-key"]'], remove: true },
  });
}
