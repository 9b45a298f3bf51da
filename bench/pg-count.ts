/**
 * PostgreSQL queries per request, counted on the wire. PostgreSQL's own counters cannot do it here:
 * pg_stat_statements needs `shared_preload_libraries` (a server restart), and `xact_commit` in
 * pg_stat_database is flushed by each backend when it likes (an idle pooled connection's
 * transactions showed up only when it disconnected, in a check on PostgreSQL 15), besides counting
 * every other client of the database, such as tests running meanwhile.
 *
 * So a second service, like the one measured (same environment, same stores), is started with its
 * DATABASE_URL through a proxy in this process that reads the messages each connection sends: every
 * simple query (`Q`) and every execution of an extended-protocol statement (`E`) is one query. The
 * requests are sent one at a time, twice: the first pass brings the service to its steady state
 * (caches filled), the second is counted. The change feed's own connection (the one that sends
 * `LISTEN`) is left out: its heartbeat (`SELECT 1` four times a second) is per second, not per request.
 * The measured service itself is not proxied: a hop through this process would slow its answers.
 */
import { connect, createServer, type Socket } from 'node:net';
import { oneAtATime, type Requests } from './load.js';
import { startService } from './service.js';

/** The length word of the startup phase's messages, and their request codes (SSL, GSSAPI encryption). */
const NEGOTIATION_CODES = new Set([80877103, 80877104]);

interface Counts {
  /** Queries sent by every connection but the change feed's. */
  queries: number;
  /** Queries sent by the change feed's connection. */
  feed: number;
}

export async function pgQueriesPerRequest(env: Record<string, string>, requests: Requests, probes: number): Promise<number> {
  const proxy = await countingProxy(env.DATABASE_URL!);
  const service = await startService({ ...env, DATABASE_URL: proxy.url });
  try {
    await oneAtATime(service.url, requests, probes);
    const before = proxy.counts();
    await oneAtATime(service.url, requests, probes);
    return (proxy.counts().queries - before.queries) / probes;
  } finally {
    await service.stop();
    await proxy.close();
  }
}

async function countingProxy(databaseUrl: string): Promise<{ url: string; counts(): Counts; close(): Promise<void> }> {
  const upstream = new URL(databaseUrl);
  const target = { host: upstream.hostname || '127.0.0.1', port: Number(upstream.port || 5432) };
  const totals: Counts = { queries: 0, feed: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const server = connect(target);
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    const reader = messageReader((type, start) => {
      // A query of the change feed's connection: from its LISTEN on, all of its queries are the feed's.
      if (type === 0x51 && start.toString('latin1').startsWith('LISTEN')) reader.feed = true;
      if (type === 0x51 || type === 0x45) {
        if (reader.feed) totals.feed++;
        else totals.queries++;
      }
    });
    client.on('data', (chunk: Buffer) => {
      reader.read(chunk);
      server.write(chunk);
    });
    client.on('end', () => server.end());
    server.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const proxied = new URL(databaseUrl);
  proxied.host = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url: proxied.toString(),
    counts: () => ({ ...totals }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * Splits what a client sends into protocol messages, whatever the chunks: first the startup phase's
 * untyped messages (a length word, then a code), then typed ones (a type byte, then a length word
 * that counts itself). `onMessage` gets each typed message's type and the first bytes of its body.
 */
function messageReader(onMessage: (type: number, start: Buffer) => void) {
  let startup = true;
  let header = Buffer.alloc(0);
  /** Body bytes of the current message still to pass. */
  let skip = 0;
  let pending: { type: number; body: Buffer[]; kept: number } | null = null;
  const KEEP = 16;
  const reader = {
    feed: false,
    read(chunk: Buffer): void {
      let at = 0;
      while (at < chunk.length) {
        if (skip > 0) {
          const n = Math.min(skip, chunk.length - at);
          if (pending && pending.kept < KEEP) {
            const part = chunk.subarray(at, at + Math.min(n, KEEP - pending.kept));
            pending.body.push(part);
            pending.kept += part.length;
          }
          skip -= n;
          at += n;
          if (skip === 0 && pending) {
            onMessage(pending.type, Buffer.concat(pending.body));
            pending = null;
          }
          continue;
        }
        const size = startup ? 8 : 5;
        const n = Math.min(size - header.length, chunk.length - at);
        header = Buffer.concat([header, chunk.subarray(at, at + n)]);
        at += n;
        if (header.length < size) continue;
        if (startup) {
          const length = header.readInt32BE(0);
          // An SSL or GSSAPI request is answered with one byte; the startup message follows it.
          if (!NEGOTIATION_CODES.has(header.readInt32BE(4))) startup = false;
          skip = length - 8;
        } else {
          skip = header.readInt32BE(1) - 4;
          pending = { type: header[0]!, body: [], kept: 0 };
          if (skip === 0) {
            onMessage(pending.type, Buffer.alloc(0));
            pending = null;
          }
        }
        header = Buffer.alloc(0);
      }
    },
  };
  return reader;
}
