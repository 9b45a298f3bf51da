import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';

/**
 * What a logged URL may not show: anything shaped like an API key, and any run long enough to be one's
 * secret part or a token (24 or more base64url characters), in any case.
 */
const SECRET_LIKE = /pet_|[A-Za-z0-9_-]{24}/i;

/**
 * A request's URL as logged. A client may put a key or the admin token in a URL, percent-encoded once,
 * twice or partly, in any case: each path segment and query parameter name is shown unless, decoded as
 * often as it decodes, it looks like a secret or holds one of `secrets`; query values are never shown.
 */
export function loggableUrl(url: string, secrets: readonly string[] = []): string {
  const hidden = (part: string) => {
    const plain = decodedFully(part);
    const lower = plain.toLowerCase();
    return SECRET_LIKE.test(plain) || secrets.some((secret) => lower.includes(secret.toLowerCase())) ? '[redacted]' : part;
  };
  const at = url.indexOf('?');
  const path = (at === -1 ? url : url.slice(0, at)).split('/').map(hidden).join('/');
  if (at === -1) return path;
  const names = url
    .slice(at + 1)
    .split('&')
    .map((pair) => `${hidden(pair.split('=')[0] ?? '')}=…`);
  return `${path}?${names.join('&')}`;
}

/** Percent-decoded until it no longer changes (at most a few times), `+` read as a space. */
function decodedFully(text: string): string {
  let current = text;
  for (let i = 0; i < 5; i++) {
    let next: string;
    try {
      next = decodeURIComponent(current.replace(/\+/g, ' '));
    } catch {
      // A stray `%`: decode what can be decoded, sequence by sequence.
      next = current.replace(/(%[0-9a-f]{2})+/gi, (run) => {
        try {
          return decodeURIComponent(run);
        } catch {
          return run;
        }
      });
    }
    if (next === current) return current;
    current = next;
  }
  return current;
}

/**
 * JSON logs on stdout. Keys and the admin token never reach them: headers are not logged, URLs are
 * logged as `loggableUrl` shows them (`secrets`: the admin token, when there is one).
 * Lines are written asynchronously (what arrives while a write is under way goes out with the next one),
 * so that an access line per request does not cost a system call per request; `flush` before exiting.
 * Tests pass a destination of their own.
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination({ dest: 1, sync: false }), secrets: readonly string[] = []): Logger {
  const options = {
    level,
    serializers: {
      req: (request: FastifyRequest) => ({ method: request.method, url: loggableUrl(request.url, secrets), remoteAddress: request.ip }),
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
