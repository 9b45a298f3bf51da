import { connect, type Server, type Socket } from 'node:net';

/**
 * Parallel clients as a conformance runner's jobs are: each request on a connection of its own, every
 * connection open before any request is written, and every request written in one go, before the
 * service could answer any (raw HTTP/1.1 over `node:net`, so that nothing queues or pools them).
 */

/** One answer, as the client read it. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A request to write: method, path and headers (a JSON body with its own Content-Type). */
export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: object;
}

/**
 * Opens `count` connections to `port` on 127.0.0.1 (or one to each of `ports` in turn), each kept open.
 * With the service's `server` in this process, it also waits until the server has accepted them all: the
 * client's connect and the server's accept then share one event loop, which may take the accepts after
 * the client has written (a service in a process of its own accepts a connection before reading what
 * was written on it).
 */
export async function openConnections(ports: number | number[], count: number, server?: Server): Promise<Socket[]> {
  const list = Array.isArray(ports) ? ports : [ports];
  const accepted = server && (await connectionsOf(server));
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      (_, i) =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect({ host: '127.0.0.1', port: list[i % list.length]! });
          socket.once('connect', () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
  if (server) while ((await connectionsOf(server)) < accepted! + count) await new Promise((r) => setImmediate(r));
  return sockets;
}

const connectionsOf = (server: Server) =>
  new Promise<number>((resolve, reject) => server.getConnections((error, n) => (error ? reject(error) : resolve(n))));

/** The bytes of one request. */
function rawOf({ method = 'GET', path, headers = {}, body }: RawRequest): string {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push('content-type: application/json');
  lines.push(`content-length: ${Buffer.byteLength(payload)}`);
  return `${lines.join('\r\n')}\r\n\r\n${payload}`;
}

/** Reads one answer from `socket` (its head, and a body of `content-length` bytes). */
function readAnswer(socket: Socket): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      const [statusLine, ...fields] = buffered.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const field of fields) {
        const colon = field.indexOf(':');
        headers[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buffered.length < end + 4 + length) return;
      socket.off('data', onData);
      socket.off('error', reject);
      const body = buffered.subarray(end + 4, end + 4 + length).toString();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

/**
 * Writes `requests[i]` on `sockets[i]`, all in one turn, then reads each answer; the sockets stay open
 * (the answers are kept-alive) for the caller to use again or close.
 */
export async function sendAll(sockets: Socket[], requests: RawRequest[]): Promise<RawAnswer[]> {
  const answers = sockets.map((socket) => readAnswer(socket));
  requests.forEach((request, i) => sockets[i]!.write(rawOf(request)));
  return Promise.all(answers);
}

/** Sends one request on an open connection and reads its answer. */
export async function sendOn(socket: Socket, request: RawRequest): Promise<RawAnswer> {
  return (await sendAll([socket], [request]))[0]!;
}

export function closeAll(sockets: Socket[]): void {
  for (const socket of sockets) socket.destroy();
}
