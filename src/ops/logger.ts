import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
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
    redact: { paths: ['req.headers', 'headers', 'authorization', '["x-api-key"]'], remove: true },
  };
  return pino(options, destination);
}

type LogArgs = Parameters<FastifyBaseLogger['info']>;

/**
 * A request's logger (Fastify's `childLoggerFactory`), made only when something is logged through it:
 * most requests log nothing but their access line, which goes through the parent with the request id,
 * and making a pino child (bindings, serializers, redaction) on every request costs more than that line.
 */
export function lazyChildLogger(parent: FastifyBaseLogger, bindings: object, options: object): FastifyBaseLogger {
  return new LazyChild(parent, bindings, options) as unknown as FastifyBaseLogger;
}

class LazyChild {
  #child: FastifyBaseLogger | undefined;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: object,
    private readonly options: object,
  ) {}

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  fatal(...args: LogArgs) {
    this.#real().fatal(...args);
  }
  error(...args: LogArgs) {
    this.#real().error(...args);
  }
  warn(...args: LogArgs) {
    this.#real().warn(...args);
  }
  info(...args: LogArgs) {
    this.#real().info(...args);
  }
  debug(...args: LogArgs) {
    this.#real().debug(...args);
  }
  trace(...args: LogArgs) {
    this.#real().trace(...args);
  }
  silent(...args: LogArgs) {
    this.#real().silent(...args);
  }
  child(bindings: object, options?: object) {
    return this.#real().child(bindings, options);
  }
  #real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }
}
