import { Command, InvalidArgumentError } from 'commander';
import { EventSource } from 'eventsource';
import { EVENT_TYPES, type Event, type EventType } from '../events/schemas.js';
import { baseUrl } from '../report-card/cli.js';
import { NEWEST_VERSION } from '../versions/versions.js';
import { processInterrupt } from '../ops/interrupt.js';

export interface EventsCliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** The command's exit code: 0 once interrupted (Ctrl-C), 1 when the stream could not be followed. */
  exit: (code: number) => void;
  /** Default: the built-in `fetch`. */
  fetch?: typeof fetch;
  /** The command's waits after a refused opening: a `429`'s `Retry-After`, a backoff. Default: `setTimeout`. */
  sleep?: (ms: number) => Promise<void>;
  /** In [0, 1), the waits' jitter. Default: `Math.random`. */
  random?: () => number;
  /** Aborted to stop following (default: the process's `SIGINT` or `SIGTERM`, e.g. Ctrl-C): exit code 0. */
  interrupt?: AbortSignal;
}

interface Options {
  url: string;
  key: string;
  type: EventType[];
  after?: string;
  json?: boolean;
}

/** Openings refused for now (a `429`, a `5xx`, no answer) tried again after a wait, at most this many in a row. */
const MAX_ATTEMPTS = 5;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 30_000;
/** Answers that say "not now": an opening tried again after a backoff (at least their `Retry-After`). */
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);

/** The stream cannot be followed: one line, exit code 1. */
class CannotFollow extends Error {}

/**
 * `petstore events tail --url … --key …` (docs/tools.md#following-a-keys-events): a key's events as the service writes
 * them (`GET /events/stream`), a line each as it comes (`--json`: the event's JSON), until Ctrl-C, which exits 0. The
 * stream is read by the `eventsource` package, a WHATWG `EventSource`: after each end of the stream it waits the
 * stream's `retry` and resumes with `Last-Event-ID`, as a browser would. An opening refused for now (a `429`, a
 * `5xx`, no answer) is tried again after its `Retry-After` or a backoff, five times in a row at most; one refused
 * for good (an unknown `--after`, a sixth stream, a wrong key) exits 1. The key is sent, never printed.
 */
export function eventsCommand(io: EventsCliIo): Command {
  const tail = new Command('tail')
    .description(
      "a key's events as the service writes them, a line each, followed across the stream's ends until Ctrl-C",
    )
    .requiredOption('--url <url>', 'the service, e.g. http://localhost:8080', baseUrl)
    .requiredOption('--key <key>', 'the key (pet_… or pet_test_…) whose events to follow')
    .option('--type <type>', `only events of this type (again for several): ${EVENT_TYPES.join(', ')}`, eventType, [])
    .option('--after <id>', 'resume after this event (evt_…): the events written after it first, then live')
    .option('--json', 'print each event as the JSON the stream carried')
    .action((options: Options) => tailEvents(options, io));
  return new Command('events').description("a key's events, from a running service").addCommand(tail);
}

async function tailEvents(o: Options, io: EventsCliIo): Promise<void> {
  const own = io.interrupt ? undefined : processInterrupt();
  const interrupt = io.interrupt ?? own!.signal;
  const sleep = io.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = io.random ?? Math.random;
  const say = (text: string) => io.err(`petstore events tail: ${text.split(o.key).join('pet_…')}`);
  let lastEventId = o.after;
  // The `eventsource` package lets the process exit while it waits to reconnect (its timer is unref'd): a command
  // that follows until Ctrl-C holds it open.
  const alive = setInterval(() => {}, 60_000);
  try {
    for (let attempt = 1; !interrupt.aborted; attempt++) {
      const refused = await follow(o, io.fetch ?? fetch, interrupt, {
        lastEventId,
        printed: (event, data) => {
          lastEventId = event.id;
          attempt = 0;
          io.out(o.json ? data : describe(event));
        },
        resuming: () =>
          say(`the stream ended; resuming${lastEventId ? ` after ${lastEventId}` : ''} once its retry has passed`),
      });
      if (refused === undefined) break;
      if (attempt >= MAX_ATTEMPTS || !refused.again) throw new CannotFollow(refused.why);
      const backoff = random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
      await sleep(Math.max(1000 * refused.retryAfter, backoff));
    }
    io.exit(0);
  } catch (error) {
    if (!(error instanceof CannotFollow)) throw error;
    say(error.message);
    io.exit(1);
  } finally {
    clearInterval(alive);
    own?.dispose();
  }
}

/** Why an opening was refused, and whether (and after how long) to try again. */
interface Refusal {
  why: string;
  again: boolean;
  retryAfter: number;
}

/**
 * Follows the stream with an `EventSource` until it is interrupted (undefined) or an opening is refused (why): the
 * `EventSource` itself resumes after each end of the stream.
 */
function follow(
  o: Options,
  fetcher: typeof fetch,
  interrupt: AbortSignal,
  on: { lastEventId: string | undefined; printed: (event: Event, data: string) => void; resuming: () => void },
): Promise<Refusal | undefined> {
  const url = new URL(`${o.url}/events/stream`);
  for (const type of o.type) url.searchParams.append('type', type);
  let refusal: Refusal | undefined;
  let opened = 0;
  const source = new EventSource(url, {
    fetch: async (input, init) => {
      const headers = new Headers(init.headers);
      headers.set('x-api-key', o.key);
      headers.set('petstore-version', NEWEST_VERSION);
      // The first opening resumes after --after, or after the last event printed before a refusal.
      if (opened++ === 0 && on.lastEventId !== undefined) headers.set('last-event-id', on.lastEventId);
      refusal = undefined;
      try {
        const answer = await fetcher(input, { ...init, headers });
        if (!answer.ok || !answer.headers.get('content-type')?.startsWith('text/event-stream'))
          refusal = await refusalOf(o.url, answer);
        return answer;
      } catch (error) {
        refusal = { why: `could not reach ${o.url}: ${reason(error)}`, again: true, retryAfter: 0 };
        throw error;
      }
    },
  });
  const print = (message: MessageEvent<string>) => on.printed(JSON.parse(message.data) as Event, message.data);
  for (const type of EVENT_TYPES) source.addEventListener(type, print);
  return new Promise((resolve) => {
    const done = (outcome: Refusal | undefined) => {
      interrupt.removeEventListener('abort', stop);
      source.close();
      resolve(outcome);
    };
    const stop = () => done(undefined);
    interrupt.addEventListener('abort', stop, { once: true });
    source.addEventListener('error', () => {
      // CONNECTING after a stream: it ended, and the EventSource resumes it after its retry. An opening refused or
      // not answered is this command's to try again, after its own wait.
      if (source.readyState === EventSource.CONNECTING && refusal === undefined) return on.resuming();
      done(refusal ?? { why: `${o.url} ended the stream`, again: true, retryAfter: 0 });
    });
  });
}

/** What a refused opening said: its status and problem, and whether it may be tried again. */
async function refusalOf(base: string, answer: Response): Promise<Refusal> {
  const body = (await answer
    .clone()
    .json()
    .catch(() => undefined)) as { code?: unknown; detail?: unknown } | undefined;
  const retryAfter = /^\d+$/.test(answer.headers.get('retry-after') ?? '')
    ? Number(answer.headers.get('retry-after'))
    : 0;
  if (answer.ok)
    return { why: `${base} did not answer an event stream: is it the Petstore service?`, again: false, retryAfter };
  const said = typeof body?.code === 'string' ? ` ${body.code}: ${oneLine(String(body.detail ?? ''))}` : '';
  return { why: `${base} answered ${answer.status}${said}`, again: RETRY_STATUSES.has(answer.status), retryAfter };
}

/** An event as one line: when, its type, its id, and what it is about (`order 12`, `endpoint we_…`). */
function describe(event: Event): string {
  const data = event.data as { id?: number; endpointId?: string };
  const about = data.endpointId !== undefined ? `endpoint ${data.endpointId}` : `order ${data.id}`;
  return `${event.timestamp} ${event.type} ${event.id} ${about}`;
}

function eventType(value: string, previous: EventType[]): EventType[] {
  if (!(EVENT_TYPES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`expected one of ${EVENT_TYPES.join(', ')}`);
  return [...previous, value as EventType];
}

/** What went wrong on the way, from the error and its causes: `ECONNREFUSED 127.0.0.1:9`. */
function reason(error: unknown): string {
  let deepest = error;
  for (let e = error, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) deepest = e;
  const code = (deepest as { code?: string }).code;
  const message = deepest instanceof Error ? deepest.message : String(deepest);
  return oneLine(code && !message.includes(code) ? `${code} ${message}` : message);
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
