import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { API_KEY_HEADER } from '../keys/identify.js';
import { LogBatch } from './log-batch.js';

/**
 * What a logged URL may not show: anything shaped like an API key, and any run long enough to be one's
 * secret part or a token (24 or more base64url characters), in any case.
 */
const SECRET_LIKE = /pet_|[A-Za-z0-9_-]{24}/i;

/** What makes a URL need a look part by part: an encoding (`%`, `+`) or a query. */
const PLAIN_UNLESS = /[%+?]/;

/**
 * A request's URL as logged. A client may put a key or the admin token in a URL, percent-encoded once,
 * twice or partly, in any case: each path segment and query parameter name is shown unless, decoded as
 * often as it decodes, it looks like a secret or holds one of `secrets`; query values are never shown.
 */
export function loggableUrl(url: string, secrets: readonly string[] = []): string {
  // Nothing encoded, no query, nothing secret-like: what every segment would show, the URL shows whole.
  if (
    !PLAIN_UNLESS.test(url) &&
    !SECRET_LIKE.test(url) &&
    !secrets.some((secret) => url.toLowerCase().includes(secret.toLowerCase()))
  )
    return url;
  const hidden = (part: string) => {
    const plain = decodedFully(part);
    const lower = plain.toLowerCase();
    return SECRET_LIKE.test(plain) || secrets.some((secret) => lower.includes(secret.toLowerCase()))
      ? '[redacted]'
      : part;
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
 * The service's logger, writing to `destination` (see `stdout`; tests pass one of their own). Keys
 * and the admin token never reach the logs: headers are not logged, URLs are logged as `loggableUrl`
 * shows them (`secrets`: the admin token, when there is one). `flush` before exiting.
 */
export function createLogger(
  level: string,
  destination: pino.DestinationStream = stdout('json'),
  secrets: readonly string[] = [],
): Logger {
  const options = {
    level,
    serializers: {
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: loggableUrl(request.url, secrets),
        remoteAddress: request.ip,
      }),
    },
    redact: {
      paths: ['req.headers', 'headers', 'authorization', `[${JSON.stringify(API_KEY_HEADER.toLowerCase())}]`],
      remove: true,
    },
  };
  return pino(options, destination);
}

/**
 * Standard output as a destination: JSON lines for machines (a turn of the event loop's lines in one
 * write, ./log-batch.ts, so an access line per request does not cost a system call per request), or
 * lines for people (pino-pretty: time, level, message, then the fields).
 */
export function stdout(format: 'json' | 'pretty'): pino.DestinationStream {
  if (format === 'json') return new LogBatch(pino.destination({ dest: 1, sync: true }));
  return pinoPretty({
    destination: 1,
    colorize: Boolean(process.stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    ignore: 'pid,hostname,reqId,req,statusCode,responseTime',
    messageFormat: prettyMessage,
  });
}

/**
 * A line's message for people: an access line reads as `GET /pets/1 200 1.2 ms`; every line ends with its request id.
 */
function prettyMessage(line: Record<string, unknown>, messageKey: string): string {
  const req = line.req as { method?: string; url?: string; remoteAddress?: string } | undefined;
  const responseTime = typeof line.responseTime === 'number' ? ` ${line.responseTime.toFixed(1)} ms` : '';
  const status = line.statusCode === undefined ? '' : ` ${line.statusCode}`;
  const request = req ? ` ${req.method} ${req.url}${status}${responseTime} from ${req.remoteAddress}` : '';
  const id = line.reqId === undefined ? '' : ` (${line.reqId})`;
  return `${line[messageKey]}${request ? ':' : ''}${request}${id}`;
}

/** How log lines are written (LOG_FORMAT): `pretty` for people, `json` for machines, `auto` as below. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/** `auto` means pretty on a terminal, JSON anywhere else (a pipe, a file, a log collector). */
export function logFormatFor(format: LogFormat, isTerminal: boolean): 'json' | 'pretty' {
  return format === 'auto' ? (isTerminal ? 'pretty' : 'json') : format;
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
    this.real().level = level;
  }
  child(bindings: object, options?: object) {
    return this.real().child(bindings, options);
  }
  /** The pino child, made on first use. */
  real(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }
}

// Each level's method passes the call to the real child, made then.
for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const) {
  Object.defineProperty(LazyChild.prototype, level, {
    value(this: LazyChild, ...args: LogArgs) {
      this.real()[level](...args);
    },
  });
}
