import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { PublicConfig } from '../config.js';
import type { Metrics } from '../ops/metrics.js';
import type { LimiterStore } from '../ratelimit/store.js';
import type { Clock } from '../clock.js';
import { addressRefusals, type AnswerHeaders, connectHandler } from './client-errors.js';
import { type AddressGuard, guardAddresses } from './connections.js';
import { MAX_HEAD_BYTES } from './limits.js';
import { boundPipelining, CLOSE_ABOVE } from './pipelining.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
/** The fast entrance, in front of Fastify's handler once it exists (./fast-lane.ts). */
export type Entrance = (req: IncomingMessage, res: ServerResponse, next: Handler) => void;

export interface PublicServerDeps {
  config: Pick<PublicConfig, 'publicUrl' | 'timeouts' | 'trustProxy'>;
  limiter: LimiterStore;
  metrics: Pick<Metrics, 'connectionsClosed'>;
  logger: FastifyBaseLogger | false;
  clock: Clock;
  /** The fast entrance once built; until then every request goes to Fastify. */
  entrance: () => Entrance | undefined;
  /** What every answer carries, also one given before a request could be read. */
  always: AnswerHeaders;
}

/**
 * The public listener's Node server, as Fastify's `serverFactory`: the server Fastify would make, with
 * what no client may do to it bounded (slow or idle clients, connections per address, requests
 * pipelined unanswered) and the fast entrance in front of Fastify's handler.
 */
export function publicServer({ config, limiter, metrics, logger, clock, entrance, always }: PublicServerDeps) {
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
        metrics.connectionsClosed.inc({ reason: 'pipelining' });
        if (logger) logger.warn({ remoteAddress: socket.remoteAddress }, `connection closed: more than ${CLOSE_ABOVE} requests sent unanswered`);
        addresses?.flooded(socket.remoteAddress ?? '');
      },
      { bannedReadPauseMs: config.trustProxy ? 0 : timeouts.bannedReadPauseMs },
    );
    const server = createServer(http, (req, res) => {
      if (!pipelining.admit(req, res)) return;
      const fast = entrance();
      if (fast) fast(req, res, handler);
      else handler(req, res);
    });
    // Without these Node answers a bare 417, and closes a CONNECT without a word: both become problems.
    server.on('checkExpectation', handler);
    server.on('connect', connectHandler(publicUrl, limiter, always));
    server.keepAliveTimeout = timeouts.keepAliveMs;
    server.requestTimeout = timeouts.requestMs;
    // While a request is handled and answered, a connection on which nothing moves for this long is
    // closed: an answer the client does not read is abandoned (between requests, keepAliveTimeout).
    server.timeout = timeouts.sendMs;
    if (!config.trustProxy) {
      const { connectionsPerAddress } = timeouts;
      const refusals = addressRefusals(publicUrl, limiter, always, connectionsPerAddress, (reason) => metrics.connectionsClosed.inc({ reason }));
      addresses = guardAddresses(server, connectionsPerAddress, clock, refusals);
    }
    return server;
  };
}
