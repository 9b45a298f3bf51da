import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real server, which a test can cut and restore: the way to make
 * PostgreSQL "unreachable" for one app without stopping the server every other test uses. With
 * `slowReplies`, the server's bytes reach the client `bytes` at a time, one slice every `everyMs`.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(
  target: { host: string; port: number },
  slowReplies?: { bytes: number; everyMs: number },
): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      if (server) return resolve();
      server = createServer((client) => {
        const upstream = connect(target);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream);
        if (slowReplies) timers.add(trickle(upstream, client, slowReplies));
        else upstream.pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        const address = server!.address();
        if (typeof address === 'object' && address) port = address.port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const timer of timers) clearInterval(timer);
      timers.clear();
      for (const s of sockets) s.destroy();
      if (server) server.close(() => resolve());
      else resolve();
      server = null;
    });
  await listen();
  return {
    get port() {
      return port;
    },
    cut: stop,
    restore: listen,
    close: stop,
  };
}

/** Passes what `from` sends on to `to`, `bytes` at a time, one slice every `everyMs`. */
function trickle(from: Socket, to: Socket, { bytes, everyMs }: { bytes: number; everyMs: number }): NodeJS.Timeout {
  let held = Buffer.alloc(0);
  from.on('data', (chunk: Buffer) => (held = Buffer.concat([held, chunk])));
  return setInterval(() => {
    if (held.length === 0) return;
    to.write(held.subarray(0, bytes));
    held = held.subarray(bytes);
  }, everyMs);
}
