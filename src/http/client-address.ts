import type { IncomingMessage } from 'node:http';
import proxyaddr from '@fastify/proxy-addr';

/**
 * A request's client address as Fastify's `request.ip` gives it, for what answers before Fastify (the
 * fast lane): the socket's peer, or behind trusted proxies (`TRUST_PROXY`) the nearest address that is
 * not a trusted proxy, walking `X-Forwarded-For` back from the peer, by Fastify's own rules and library.
 */
export function clientAddressOf(trustProxy: false | readonly string[]): (req: IncomingMessage) => string | undefined {
  if (!trustProxy) return (req) => req.socket.remoteAddress;
  const trusted = proxyaddr.compile([...trustProxy]);
  return (req) => proxyaddr(req, trusted);
}
