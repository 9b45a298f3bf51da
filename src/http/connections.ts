import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../clock.js';
import { FLOOD_REFUSAL_MS } from './pipelining.js';

export interface AddressRefusals {
  /** A connection beyond the address's allowance: answered and closed before any request is read. */
  crowded(socket: Socket): void;
  /** A connection from an address refused after a flood, for `retryAfterS` more seconds. */
  flooding(socket: Socket, retryAfterS: number): void;
}

export interface AddressGuard {
  /**
   * One of the address's connections flooded (./pipelining.ts): its other connections are closed at
   * once, before Node parses what they hold, and new ones are refused for `FLOOD_REFUSAL_MS`.
   */
  flooded(address: string): void;
}

/**
 * What one client address can make the service hold and do stays bounded: at most `perAddress`
 * connections at once (sockets, and the kernel's buffers behind answers it does not read), and none for
 * a while once one of them sent more pipelined requests than a client waiting for answers would. Node
 * parses all that one read brings (up to 64 KB, hundreds of requests) before anything can stop it, so
 * the defence is to read no more from an address that did it. A refused connection never reaches the
 * HTTP parser: it is answered and closed. Off behind a trusted proxy: every connection then comes from the
 * proxy, whose own limits apply.
 */
export function guardAddresses(
  server: Server,
  perAddress: number,
  clock: Clock,
  refuse: AddressRefusals,
): AddressGuard {
  const open = new Map<string, Set<Socket>>();
  const refusedUntil = new Map<string, number>();

  // The server hands a connection to its HTTP parser in its own `connection` listener; a refused
  // connection must never reach it, so the guard takes that listener's place and calls it for the rest
  // (emitting `connection` with a socket is how Node documents handing one to an HTTP server).
  const parse = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const until = refusedUntil.get(address);
    if (until !== undefined) {
      const left = until - clock();
      if (left > 0) return refuse.flooding(socket, Math.ceil(left / 1000));
      refusedUntil.delete(address);
    }
    let sockets = open.get(address);
    if ((sockets?.size ?? 0) >= perAddress) return refuse.crowded(socket);
    if (sockets === undefined) open.set(address, (sockets = new Set()));
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0 && open.get(address) === sockets) open.delete(address);
    });
    for (const listener of parse) listener.call(server, socket);
  });

  return {
    flooded(address) {
      const now = clock();
      for (const [other, until] of refusedUntil) if (until <= now) refusedUntil.delete(other);
      refusedUntil.set(address, now + FLOOD_REFUSAL_MS);
      for (const socket of open.get(address) ?? []) socket.destroy();
    },
  };
}
