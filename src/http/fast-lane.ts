import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ChangeFeed } from '../db/change-feed.js';
import type { Identity } from '../keys/identify.js';
import type { HeaderList } from '../ratelimit/headers.js';
import type { Verdict } from '../ratelimit/verdict.js';
import { TurnBatch } from '../turn-batch.js';
import { requestIdOf } from './request-id.js';
import { JSON_CONTENT_TYPE } from './responses.js';
import { runSteps, type Step, type StepLog, type StepReply, type StepRequest } from './steps.js';

/** A `GET` the fast lane may answer: its route, and its answer when memory holds it. */
export interface FastRoute {
  /** The route as Fastify names it (`/pets/:petId`): the metrics' `route` label. */
  url: string;
  /** Headers every response of the route carries in a version, refusals included. */
  headersFor(version: string): Readonly<Record<string, string>>;
  /** The URL's parameter when the URL is this route's and the route answers now; reads nothing. */
  match(url: string): string | undefined;
  /** The `200` for a matched parameter and key in a version, from memory (its body and `ETag`: ./conditional.ts); undefined when memory does not hold it. */
  answerFor(parameter: string, keyId: string, version: string): { body: string; etag: string } | undefined;
}

/** What the fast lane reports of each answer: the access log line and the request metrics. */
export type Answered = (request: { id: string; method: string; url: string; ip: string | undefined }, route: string, status: number, ms: number) => void;

export interface FastLaneDeps {
  routes: readonly FastRoute[];
  /** Every step Fastify runs before the handler of a lane route, in its order (app.ts): the lane runs the same list. */
  steps: readonly Step[];
  /** Asked for news before any row in memory is trusted: where asking reads, once per turn (below). */
  changes: Pick<ChangeFeed, 'checkReads' | 'checked'>;
  log: { warn(fields: object, message: string): void; info(fields: object, message: string): void };
  answered: Answered;
  /** False while the service drains or closes: then Fastify answers everything (Connection: close, 503). */
  open: () => boolean;
  /** The client's address, as Fastify's `request.ip` gives it (./client-address.ts): worked out only when a step or an access line asks. */
  clientAddress: (req: IncomingMessage) => string | undefined;
}

type Next = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The hot path, in front of Fastify: a `GET` of a route whose answer memory holds (a pet; a page of
 * orders the key was answered before) is answered here by the steps every API request passes through
 * Fastify (`deps.steps`: `app.apiSteps`, the same list, run by the same runner), on a request and reply
 * of the lane's own (`LaneExchange`). What the lane skips is Fastify's router and its request and reply
 * objects. The steps decide as they do in Fastify (a refusal is their `429`); when none answers, the
 * route's `200` is written from memory.
 *
 * The lane hands a request to Fastify (`next`) before anything is counted: another method or path, what
 * only Fastify's later steps decide (`fastifyDecides`), and, once the first steps know who calls, a
 * caller that is not a live key whose answer memory holds. A step that fails (the limiter's call
 * failed, before it counted) hands the request over too, before anything is written: Fastify runs the
 * steps again and answers as it answers every request. The steps that fail after the count cannot for
 * what the lane goes on with: `requireHost` a request without Host,
 * `refuseUnknownExpectation` an `Expect` that Node hands to Fastify itself, `rejectUnknownPath` a path
 * no route takes, `requireKey` a caller without a live key, `refuseVersion` a version that refuses the
 * request (decided by `chooseVersion` before the count; the lane hands such a request over). On SQLite
 * every request of a turn, Fastify's too, first waits for the turn's one look at the store's news.
 */
export function fastLane(deps: FastLaneDeps) {
  const { routes, steps, changes, open } = deps;
  const lane: Lane = { ...deps, routeLists: new Map(routes.map((route) => [route, new Map()])) };

  // Before a row in memory is trusted, the store is asked for news (db/change-feed.ts). Where asking
  // reads (SQLite's `PRAGMA data_version`), the requests read in one turn share one look, taken once
  // the turn's reading is done (../turn-batch.ts), and are then taken in the order they came, each
  // answered here or handed to Fastify, whose key lookup trusts the same look (`checked`). Every one
  // was read before the look, so a change committed before any was sent is seen by all, as a look per
  // request would see it; a look at a turn's first request would not do (a later one may have been
  // sent after a commit that followed it). Where asking reads nothing (PostgreSQL), none waits.
  const waiting = new TurnBatch<Waiting>((turn) =>
    changes.checked(() => {
      for (const w of turn) take(w.req, w.res, w.next, w.started);
    }),
  );

  return function fast(req: IncomingMessage, res: ServerResponse, next: Next): void {
    const started = performance.now();
    if (!changes.checkReads) return take(req, res, next, started);
    waiting.add(new Waiting(req, res, next, started));
  };

  /** A request, once the store's news is known: its steps run here when its route is the lane's, else it is Fastify's. */
  function take(req: IncomingMessage, res: ServerResponse, next: Next, started: number): void {
    const { method, url } = req;
    if (method !== 'GET' || url === undefined || !open() || fastifyDecides(req.headers)) return next(req, res);
    for (const route of routes) {
      const parameter = route.match(url);
      if (parameter === undefined) continue;
      const exchange = new LaneExchange(req, res, url, route, parameter, started, next, lane);
      let ran: ReturnType<typeof runSteps>;
      try {
        ran = runSteps(steps, exchange, exchange);
      } catch {
        return exchange.failed();
      }
      if (ran instanceof Promise) ran.then(exchange.ended.bind(exchange), exchange.failed.bind(exchange));
      else exchange.ended();
      return;
    }
    next(req, res);
  }
}

/**
 * What only Fastify's later steps decide: a conditional read (a 304 that counts nothing), a request
 * without Host (a 400), and one that carries a body or an encoding (a 415 for an encoded body). The
 * lane answers only what it can answer exactly as they would.
 */
function fastifyDecides(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return (
    headers['if-none-match'] !== undefined ||
    headers.host === undefined ||
    headers['content-encoding'] !== undefined ||
    headers['transfer-encoding'] !== undefined ||
    (length !== undefined && length !== '0')
  );
}

/** What every exchange of one lane shares. */
interface Lane extends FastLaneDeps {
  /** Each route's own headers by version, as a list `writeHead` takes without walking an object. */
  routeLists: Map<FastRoute, Map<string, HeaderList>>;
}

/** Where an exchange stands: its steps running, handed to Fastify, or answered. */
const RUNNING = 0;
const HANDED_OVER = 1;
const ANSWERED = 2;

/** What the steps read of a route's options: the lane's routes are conditional reads, and a conditional read is Fastify's (`fastifyDecides`). */
const LANE_ROUTE_OPTIONS = { config: { conditional: true } } as const;

/**
 * A request the lane takes, as its steps see it and as they answer it: one object for both (the
 * steps' `StepRequest` and `StepReply`), collecting the answer's headers into the list `writeHead`
 * takes.
 */
class LaneExchange implements StepRequest, StepReply {
  readonly method = 'GET';
  readonly is404 = false;
  readonly routeOptions = LANE_ROUTE_OPTIONS;
  readonly id: string;
  readonly headers: IncomingHttpHeaders;
  rateLimit!: Verdict;
  forcedRefusal: string | undefined = undefined;
  versionRefusal: StepRequest['versionRefusal'] = undefined;
  fault: StepRequest['fault'] = undefined;
  countLater: StepRequest['countLater'] = undefined;
  private state = RUNNING;
  private status = 200;
  private readonly list: HeaderList;
  private caller: Identity | undefined = undefined;
  private version = '';
  private ok: { body: string; etag: string } | undefined = undefined;
  private address: string | undefined | null = null;

  constructor(
    readonly raw: IncomingMessage,
    private readonly res: ServerResponse,
    readonly url: string,
    private readonly route: FastRoute,
    private readonly parameter: string,
    private readonly started: number,
    private readonly next: Next,
    private readonly lane: Lane,
  ) {
    this.headers = raw.headers;
    this.id = requestIdOf(raw);
    this.list = [];
  }

  get identity(): Identity {
    return this.caller!;
  }

  /**
   * Set by the first steps once they know who calls, before anything is counted: the lane goes on only
   * for a live key (test keys' faults are Fastify's); anything else is handed over now, and no later
   * step runs here.
   */
  set identity(identity: Identity) {
    this.caller = identity;
    if (identity.kind !== 'key' || identity.key.test) this.state = HANDED_OVER;
  }

  get apiVersion(): string {
    return this.version;
  }

  /**
   * Set by `chooseVersion`, right after the caller is known and still before anything is counted, just
   * after `versionRefusal`: the lane goes on only in a version not refused whose answer memory holds;
   * else it hands over now.
   */
  set apiVersion(version: string) {
    this.version = version;
    const { caller } = this;
    if (this.state !== RUNNING || caller?.kind !== 'key') return;
    if (this.versionRefusal === undefined) this.ok = this.route.answerFor(this.parameter, caller.key.id, version);
    if (this.ok === undefined) this.state = HANDED_OVER;
  }

  get ip(): string {
    if (this.address === null) this.address = this.lane.clientAddress(this.raw);
    return this.address as string;
  }

  /** As a request's logger logs: with its id. */
  get log(): StepLog {
    const { id, lane } = this;
    return {
      warn: (fields, message) => lane.log.warn({ reqId: id, ...fields }, message),
      info: (fields, message) => lane.log.info({ reqId: id, ...fields }, message),
    };
  }

  get sent(): boolean {
    return this.state !== RUNNING;
  }

  get request(): this {
    return this;
  }

  header(name: string, value: string): this {
    this.list.push(name, value);
    return this;
  }

  code(status: number): this {
    this.status = status;
    return this;
  }

  type(contentType: string): this {
    // As Fastify gives a text body's type: in UTF-8, said.
    return this.header('content-type', contentType.includes('charset=') ? contentType : `${contentType}; charset=utf-8`);
  }

  /** A step's answer (a `429`). */
  send(body = ''): this {
    this.write(body);
    return this;
  }

  /** The steps are done: handed over, answered by a step, or the route's `200` to write from memory. */
  ended(): void {
    if (this.state === HANDED_OVER) return this.next(this.raw, this.res);
    if (this.state === ANSWERED) return;
    const { body, etag } = this.ok!;
    this.list.push('content-type', JSON_CONTENT_TYPE, 'etag', etag);
    this.write(body);
  }

  /** A step failed before anything was written: Fastify runs the steps again and answers. */
  failed(): void {
    if (this.state === ANSWERED) return;
    this.state = HANDED_OVER;
    this.next(this.raw, this.res);
  }

  private write(body: string): void {
    this.state = ANSWERED;
    const { list, lane, route } = this;
    const own = ownHeaders(lane, route, this.apiVersion);
    for (let i = 0; i < own.length; i++) list.push(own[i]!);
    list.push('content-length', Buffer.byteLength(body));
    // Draining began while the steps ran: the client is told to leave, as Fastify tells it.
    if (!lane.open()) list.push('connection', 'close');
    this.res.writeHead(this.status, list).end(body);
    lane.answered(this, route.url, this.status, performance.now() - this.started);
  }
}

/** A request waiting for its turn's look at the store's news. */
class Waiting {
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly next: Next,
    readonly started: number,
  ) {}
}

/** A route's own headers in a version, listed once. */
function ownHeaders(lane: Lane, route: FastRoute, version: string): HeaderList {
  const byVersion = lane.routeLists.get(route)!;
  let list = byVersion.get(version);
  if (list === undefined) byVersion.set(version, (list = headerList(route.headersFor(version))));
  return list;
}

function headerList(headers: Readonly<Record<string, string>>): HeaderList {
  return Object.entries(headers).flat();
}
