import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ChangeFeed } from '../db/change-feed.js';
import { type HeaderList, pushRateLimitHeaders } from '../ratelimit/headers.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { Verdict } from '../ratelimit/verdict.js';
import { TurnBatch } from '../turn-batch.js';
import { type Caller, isRefusal, noteRefusal, REFUSAL_HEADERS, type RefusalMetrics, refusalBody } from './ratelimit.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

/** A `GET` the fast lane may answer: its route, and its answer when memory holds it. */
export interface FastRoute {
  /** The route as Fastify names it (`/pets/:petId`): the metrics' `route` label. */
  url: string;
  /** Headers every response of the route carries, refusals included. */
  headers: Readonly<Record<string, string>>;
  /** The URL's parameter when the URL is this route's and the route answers now; reads nothing. */
  match(url: string): string | undefined;
  /** The `200` for a matched parameter and key, from memory (its body and `ETag`: ./conditional.ts); undefined when memory does not hold it. */
  answerFor(parameter: string, keyId: string): { body: string; etag: string } | undefined;
}

/** A caller the lane may answer for: a key memory holds. */
export interface KeyCaller extends Caller {
  key: { id: string };
}

/** What the fast lane reports of each answer: the access log line and the request metrics. */
export type Answered = (request: { id: string; method: string; url: string; ip: string | undefined }, route: string, status: number, ms: number) => void;

export interface FastLaneDeps {
  routes: readonly FastRoute[];
  /** The request's caller when memory holds its key (keys/identify.ts); nothing is read from a store. */
  callerOf: (headers: IncomingHttpHeaders) => KeyCaller | undefined;
  /** Asked for news before any row in memory is trusted: where asking reads, once per turn (below). */
  changes: Pick<ChangeFeed, 'checkReads' | 'checked'>;
  /** The CORS headers of every response. */
  cors: Readonly<Record<string, string>>;
  limiter: LimiterStore;
  metrics: RefusalMetrics;
  publicUrl: string;
  log: { warn(fields: object, message: string): void };
  answered: Answered;
  /** False while the service drains or closes: then Fastify answers everything (Connection: close, 503). */
  open: () => boolean;
  /** The client's address, as Fastify's `request.ip` gives it (./client-address.ts): worked out only for an access line written. */
  clientAddress: (req: IncomingMessage) => string | undefined;
}

/**
 * The hot path, in front of Fastify: a `GET` of a route whose answer memory holds (a pet; a page of
 * orders the key was answered before), with a key memory holds, is answered here, admitted (`200`) or
 * refused (`429`), without Fastify's routing, hooks and reply. The limiter decides as it does for every
 * request: at once in memory (and for a ban already known), else with its one Redis round trip. The
 * answer is the one Fastify's steps give (test/http/fast-lane.test.ts holds them equal): the same
 * headers, built by the same functions, the same body, metrics and access line. Anything else (another
 * method or path, a URL the route does not take, a key or answer not in memory) is passed to `next`,
 * Fastify, before anything is counted; so is a request whose limiter call fails, which Fastify then
 * answers as it answers every request. On SQLite every request of a turn, Fastify's too, first waits
 * for the turn's one look at the store's news (below).
 */
export function fastLane(deps: FastLaneDeps) {
  const { routes, callerOf, changes, limiter, open } = deps;
  const answer = laneAnswerer(deps);

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

  /** A request, once the store's news is known: answered here when memory holds its key and answer, else Fastify's. */
  function take(req: IncomingMessage, res: ServerResponse, next: Next, started: number): void {
    const { method, url } = req;
    if (method !== 'GET' || url === undefined || !open() || fastifyDecides(req.headers)) return next(req, res);
    const matched = matchOf(routes, url);
    if (!matched) return next(req, res);
    const { route, parameter } = matched;
    const identity = callerOf(req.headers);
    if (!identity) return next(req, res);
    const ok = route.answerFor(parameter, identity.key.id);
    if (ok === undefined) return next(req, res);
    const { caller, policy, unbanSeq } = identity;
    const now = limiter.hitNow(caller, policy, unbanSeq);
    if (now) return answer(req, res, route, identity, ok, now, started);
    limiter.hit(caller, policy, unbanSeq).then(
      (verdict) => answer(req, res, route, identity, ok, verdict, started),
      () => next(req, res),
    );
  }
}

/**
 * What only Fastify's steps decide: a conditional read (a 304 that counts nothing), a request without
 * Host (a 400), and one that carries a body or an encoding (a 415 for an encoded body). The lane
 * answers only what it can answer exactly as they would.
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

function matchOf(routes: readonly FastRoute[], url: string): { route: FastRoute; parameter: string } | undefined {
  for (const route of routes) {
    const parameter = route.match(url);
    if (parameter !== undefined) return { route, parameter };
  }
  return undefined;
}

/** How the lane answers once the limiter decided: headers and bodies built as Fastify's steps build them. */
function laneAnswerer({ routes, cors, metrics, publicUrl, log, answered, open, clientAddress }: FastLaneDeps) {
  const refusal = refusalBody(publicUrl);
  // What does not vary, as header lists built once: `writeHead` takes a list without walking an object.
  const corsList = headerList(cors);
  const refusalList = headerList(REFUSAL_HEADERS);
  const routeLists = new Map(routes.map((route) => [route, headerList(route.headers)]));

  function answer(
    req: IncomingMessage,
    res: ServerResponse,
    route: FastRoute,
    identity: Caller,
    ok: { body: string; etag: string },
    verdict: Verdict,
    started: number,
  ): void {
    let body = ok.body;
    const id = requestIdOf(req);
    const headers: HeaderList = [REQUEST_ID_HEADER, id];
    append(headers, corsList);
    pushRateLimitHeaders(headers, verdict);
    let status = 200;
    if (isRefusal(verdict)) {
      status = 429;
      // Logged as a request's logger logs: with its id.
      noteRefusal(verdict, identity, { warn: (fields: object, message: string) => log.warn({ reqId: id, ...fields }, message) }, metrics);
      append(headers, refusalList);
      body = refusal(verdict, req.url!);
    } else {
      headers.push('content-type', JSON_CONTENT_TYPE, 'etag', ok.etag);
    }
    append(headers, routeLists.get(route)!);
    headers.push('content-length', Buffer.byteLength(body));
    // Draining began while the limiter decided: the client is told to leave, as Fastify tells it.
    if (!open()) headers.push('connection', 'close');
    res.writeHead(status, headers).end(body);
    answered(new LaneRequest(id, req.url!, req, clientAddress), route.url, status, performance.now() - started);
  }
  return answer;
}

/** A request the lane answered, as the metrics and the access line see it. */
class LaneRequest {
  readonly method = 'GET';
  constructor(
    readonly id: string,
    readonly url: string,
    readonly raw: IncomingMessage,
    private readonly clientAddress: (req: IncomingMessage) => string | undefined,
  ) {}
  /** Behind a proxy, parsing `X-Forwarded-For`: only when a line is written. */
  get ip(): string | undefined {
    return this.clientAddress(this.raw);
  }
}

type Next = (req: IncomingMessage, res: ServerResponse) => void;

/** A request waiting for its turn's look at the store's news. */
class Waiting {
  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly next: Next,
    readonly started: number,
  ) {}
}

function headerList(headers: Readonly<Record<string, string>>): HeaderList {
  return Object.entries(headers).flat();
}

function append(list: HeaderList, more: HeaderList): void {
  for (let i = 0; i < more.length; i++) list.push(more[i]!);
}

/** The content type Fastify gives a body its serialiser wrote. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
