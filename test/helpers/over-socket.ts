import { request } from 'node:http';
import { isIP } from 'node:net';

/** What a test sends: `inject`'s options, as far as the tests use them. */
export interface Sent {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  payload?: string | object;
  /** The client's address; over a socket, a loopback address stands in for it (`loopbackFor`). */
  remoteAddress?: string;
}

/** What a test reads of an answer: as `inject` gives it. */
export interface Received {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json(): unknown;
}

/**
 * Sends `sent` to the service listening at `port` over a real socket (a connection of its own, from
 * the loopback address standing in for its `remoteAddress`), as a client would.
 */
export function overSocket(port: number) {
  return (sent: Sent): Promise<Received> =>
    new Promise((resolve, reject) => {
      const payload = typeof sent.payload === 'object' ? JSON.stringify(sent.payload) : sent.payload;
      const headers: Record<string, string> = {
        ...(typeof sent.payload === 'object' ? { 'content-type': 'application/json' } : {}),
        ...sent.headers,
      };
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: sent.method ?? 'GET',
          path: sent.url,
          headers,
          agent: false,
          localAddress: loopbackFor(sent.remoteAddress),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const body = Buffer.concat(chunks).toString();
            resolve({ statusCode: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body) });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/**
 * A loopback address for a client address: itself when it is one, else one of 127.1.0.0/16 that
 * only it maps to (by its last two bytes, enough for the few addresses a test names).
 */
export function loopbackFor(address: string | undefined): string | undefined {
  if (address === undefined || address.startsWith('127.')) return address;
  if (isIP(address) !== 4) throw new Error(`no loopback address stands in for ${address}`);
  const [, , c, d] = address.split('.');
  return `127.1.${c}.${d}`;
}
