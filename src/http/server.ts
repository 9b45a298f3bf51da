import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import { addressRefusals, connectHandler, type UnreadHeaders } from './client-errors.js';
import { type AddressGuard, guardAddresses } from './connections.js';
import { MAX_HEAD_BYTES } from './limits.js';
import { boundPipelining, CLOSE_ABOVE } from './pipelining.js';
import { TurnBatch } from '../turn-batch.js';
import type { Connections } from './in-flight.js';
import type { Phases, Stage } from './stages.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** How long the public listener waits on a client, so that slow or idle ones cannot hold it. */
export interface Timeouts {
  /** From connecting (or a further request's first byte) to the end of its headers: slowloris. */
  headersMs: number;
  /** From the same start to the end of the request's body: slow bodies. */
  requestMs: number;
  /** An idle kept-alive connection is closed after this. */
  keepAliveMs: number;
  /**
   * A connection on which nothing moves for this long while a request
   * is handled is closed: an answer nobody reads is abandoned.
   */
  sendMs: number;
  /** The most connections one client address may hold at once (not behind a trusted proxy, whose own limits apply). */
  connectionsPerAddress: number;
  /**
   * How long a connection is not read once a banned caller's
   * refusal on it is written; 0: not at all (http/pipelining.ts).
   */
  bannedReadPauseMs: number;
}

/** What the server reads of the configuration (config.ts gives it). */
export interface ServerConfig {
  publicUrl: string;
  timeouts: Timeouts;
  /** Proxy addresses whose `X-Forwarded-For` is believed; false: none (each address's connections are bounded). */
  trustProxy: false | string[];
}

export interface PublicServerDeps {
  config: ServerConfig;
  logger: FastifyBaseLogger | false;
  clock: Clock;
  /** The headers of an answer given before a request could be read. */
  headersOf: UnreadHeaders;
  /** Told of each connection the server closes, and why (`pipelining`, or a refusal's problem type): the metrics. */
  closed: (reason: string) => void;
  /**
   * Where the store's news is known only by asking (SQLite's `PRAGMA data_version`, db/change-feed.ts):
   * runs `serve` once it asked, once for all the requests read in one turn. Unset where asking reads nothing.
   */
  lookOnce?: (serve: () => void) => void;
  /** This instance's connections, each given its id as it opens (./in-flight.ts). */
  connections: Connections;
}

/**
 * The public listener's Node server, as Fastify's `serverFactory`: the server Fastify would make, with
 * what no client may do to it bounded (slow or idle clients, connections per address, requests
 * pipelined unanswered), and on SQLite the requests of a turn handed to Fastify once the store's news is known.
 */
export function publicServer({ config, logger, clock, headersOf, closed, lookOnce, connections }: PublicServerDeps) {
  const { publicUrl, timeouts } = config;
  // Slow or idle clients (slowloris, slow bodies, idle sockets) must not hold connections; see config.ts.
  const http: ServerOptions = {
    maxHeaderSize: MAX_HEAD_BYTES,
    // A request without Host is answered by the service (./errors.ts `requireHost`), not by Node.
    requireHostHeader: false,
    headersTimeout: timeouts.headersMs,
    // Node enforces both timeouts by a sweep over open connections, every 30 s by default: once a second
    // makes them hold to the second.
    connectionsCheckingInterval: 1_000,
  };
  return (handler: Handler): Server => {
    let addresses: AddressGuard | undefined = undefined;
    const pipelining = boundPipelining(
      (socket) => {
        closed('pipelining');
        if (logger)
          logger.warn(
            { remoteAddress: socket.remoteAddress },
            `connection closed: more than ${CLOSE_ABOVE} requests sent unanswered`,
          );
        addresses?.flooded(socket.remoteAddress ?? '');
      },
      { bannedReadPauseMs: config.trustProxy ? 0 : timeouts.bannedReadPauseMs },
    );
    // The requests read in one turn share one look at the store's news, taken once the turn's reading
    // is done (../turn-batch.ts), and are then taken in the order they came: every one was read before
    // the look, so a change committed before any was sent is seen by all, as a look per request would
    // see it; a look at a turn's first request would not do (a later one may have been sent after a
    // commit that followed it).
    const turn =
      lookOnce &&
      new TurnBatch<ServerResponse>((answers) => lookOnce(() => answers.forEach((res) => handler(res.req, res))));
    const server = createServer(http, (req, res) => {
      if (!pipelining.admit(req, res)) return;
      if (turn) turn.add(res);
      else handler(req, res);
    });
    // Without these Node answers a bare 417, and closes a CONNECT without a word: both become problems.
    server.on('connection', (socket: Socket) => connections.opened(socket));
    server.on('checkExpectation', handler);
    server.on('connect', connectHandler(publicUrl, headersOf));
    server.keepAliveTimeout = timeouts.keepAliveMs;
    server.requestTimeout = timeouts.requestMs;
    // While a request is handled and answered, a connection on which nothing moves for this long is
    // closed: an answer the client does not read is abandoned (between requests, keepAliveTimeout).
    server.timeout = timeouts.sendMs;
    if (!config.trustProxy) {
      const { connectionsPerAddress } = timeouts;
      const refusals = addressRefusals(publicUrl, headersOf, connectionsPerAddress, closed);
      addresses = guardAddresses(server, connectionsPerAddress, clock, refusals);
    }
    return server;
  };
}

/**
 * The draining stage: once the service is told to stop (SIGTERM, src/main.ts), every answer closes its
 * connection once sent, so that a kept-alive client leaves with its answer instead of holding the drain
 * open until the keep-alive timeout, or having the connection cut while its next request is on the way.
 */
export function drainingStage(draining: () => boolean): Stage {
  const phases: Phases = {
    onSend(_request, reply, payload) {
      if (draining()) reply.header('connection', 'close');
      return payload;
    },
  };
  return { name: 'draining', forRoute: () => phases };
}
