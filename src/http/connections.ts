import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Holds each client address to `perAddress` connections at once: what one address can pin (sockets,
 * and the kernel's buffers behind an answer it does not read) stays bounded. The connection one too
 * many is answered by `refuse` (a problem with the address's headers) and closed. Off behind a trusted
 * proxy: every connection then comes from the proxy, whose own limits apply.
 */
export function capConnectionsPerAddress(server: Server, perAddress: number, refuse: (socket: Socket) => void): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > perAddress) return refuse(socket);
    open.set(address, count);
    socket.once('close', () => {
      const left = open.get(address)! - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
