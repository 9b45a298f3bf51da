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
 * So are the background jobs' polls (`JOB_SQL`), which fall in the counted pass or not by their clocks.
 * The measured service itself is not proxied: a hop through this process would slow its answers.
 */
import { connect, createServer, type Socket } from 'node:net';
import { oneAtATime, type Requests } from './load.js';
import { startService } from './service.js';

/** The length word of the startup phase's messages, and their request codes (SSL, GSSAPI encryption). */
const NEGOTIATION_CODES = new Set([80877103, 80877104]);

interface Counts {
  /** Queries sent by every connection but the change feed's, but the background jobs'. */
  queries: number;
  /** Queries sent by the change feed's connection. */
  feed: number;
  /** Queries of the background jobs' polls, and of the transactions they run in. */
  jobs: number;
}

/**
 * The background jobs' queries, by their SQL: they poll on their own clocks (the fulfilment every
 * 500 ms, the webhook dispatcher, the retention of events and deliveries), so a poll that falls in
 * the counted pass is theirs, not the requests'.
 */
const JOB_SQL = [
  /for update skip locked/i,
  /row_number\(\) over \(partition by d\.endpoint_id/i,
  /^select "seq", "created_at" from "(events|webhook_deliveries)" order by "seq"/i,
  /^delete from "(events|webhook_deliveries)" where "seq" in/i,
];

export async function pgQueriesPerRequest(
  env: Record<string, string>,
  requests: Requests,
  probes: number,
): Promise<number> {
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
  const totals: Counts = { queries: 0, feed: 0, jobs: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const server = connect(target);
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    const reader: MessageReader = new MessageReader(counter(totals, () => reader));
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
 * Counts a connection's queries into `totals`. An `Execute` runs the portal its `Bind` made from a
 * statement its `Parse` named (pg sends a query unnamed, Parse, Bind, Execute, unless it is given a name:
 * src/db/named-statements.ts names the service's, parsed once per connection and then only bound and
 * executed), so the SQL of each statement and portal is kept by name. A transaction's queries are
 * counted at its end, as the jobs' if one of them is.
 */
function counter(totals: Counts, readerOf: () => MessageReader): (type: number, start: Buffer) => void {
  const statements = new Map<string, string>();
  const portals = new Map<string, string>();
  let transaction: { queries: number; job: boolean } | null = null;
  return (type, start) => {
    const reader = readerOf();
    const text = start.toString('latin1');
    // A query of the change feed's connection: from its LISTEN on, all of its queries are the feed's.
    if (type === 0x51 && text.startsWith('LISTEN')) reader.feed = true;
    const [first = '', second = ''] = text.split('\0', 2);
    // Parse: the statement's name, its SQL. Bind: the portal's name, the statement's.
    if (type === 0x50) statements.set(first, second);
    if (type === 0x42) portals.set(first, statements.get(second) ?? '');
    if (type !== 0x51 && type !== 0x45) return;
    if (reader.feed) return void totals.feed++;
    const sql = (type === 0x51 ? first : (portals.get(first) ?? '')).trim();
    const job = JOB_SQL.some((pattern) => pattern.test(sql));
    if (/^begin/i.test(sql)) transaction = { queries: 0, job: false };
    if (transaction === null) return void (job ? totals.jobs++ : totals.queries++);
    transaction.queries++;
    transaction.job ||= job;
    if (!/^(commit|rollback)/i.test(sql)) return;
    if (transaction.job) totals.jobs += transaction.queries;
    else totals.queries += transaction.queries;
    transaction = null;
  };
}

/**
 * How many bytes of a message's body `MessageReader` hands
 * over: enough to tell a `LISTEN`, or a job's query by its SQL.
 */
const KEEP = 2_000;

/**
 * Splits what a client sends into protocol messages, whatever the chunks: first the startup phase's
 * untyped messages (a length word, then a code), then typed ones (a type byte, then a length word
 * that counts itself). `onMessage` gets each typed message's type and the first bytes of its body.
 */
class MessageReader {
  /** Whether the connection is the change feed's: set by `onMessage`. */
  feed = false;
  private startup = true;
  private header = Buffer.alloc(0);
  /** Body bytes of the current message still to pass. */
  private skip = 0;
  private pending: { type: number; body: Buffer[]; kept: number } | null = null;
  private readonly onMessage: (type: number, start: Buffer) => void;

  constructor(onMessage: (type: number, start: Buffer) => void) {
    this.onMessage = onMessage;
  }

  read(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        at = this.passBody(chunk, at);
        continue;
      }
      const size = this.startup ? 8 : 5;
      const n = Math.min(size - this.header.length, chunk.length - at);
      this.header = Buffer.concat([this.header, chunk.subarray(at, at + n)]);
      at += n;
      if (this.header.length < size) continue;
      this.startMessage();
      this.header = Buffer.alloc(0);
    }
  }

  /** Passes what `chunk` holds of the current body from `at` on, keeping its first bytes; where it stopped. */
  private passBody(chunk: Buffer, at: number): number {
    const n = Math.min(this.skip, chunk.length - at);
    const pending = this.pending;
    if (pending && pending.kept < KEEP) {
      const part = chunk.subarray(at, at + Math.min(n, KEEP - pending.kept));
      pending.body.push(part);
      pending.kept += part.length;
    }
    this.skip -= n;
    if (this.skip === 0 && pending) {
      this.onMessage(pending.type, Buffer.concat(pending.body));
      this.pending = null;
    }
    return at + n;
  }

  /** A whole header read: the body that follows is to pass, and, for a typed message, to hand over. */
  private startMessage(): void {
    const header = this.header;
    if (this.startup) {
      const length = header.readInt32BE(0);
      // An SSL or GSSAPI request is answered with one byte; the startup message follows it.
      if (!NEGOTIATION_CODES.has(header.readInt32BE(4))) this.startup = false;
      this.skip = length - 8;
    } else {
      this.skip = header.readInt32BE(1) - 4;
      this.pending = { type: header[0]!, body: [], kept: 0 };
      if (this.skip === 0) {
        this.onMessage(this.pending.type, Buffer.alloc(0));
        this.pending = null;
      }
    }
  }
}
