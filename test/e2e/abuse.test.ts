/**
 * Abusive connections against the real service: slow headers (slowloris), slow bodies and thousands
 * of idle connections. Other clients keep being served meanwhile, and the server cuts the abusers
 * off after the configured timeouts (short ones here, so that the suite runs in seconds).
 */
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT, runBuilt, type Server, startServer, tempDir } from '../helpers/process.js';

const HEADERS_S = 1;
const REQUEST_S = 2;
const KEEP_ALIVE_S = 1;
/** Node checks the timeouts once a second (see app.ts); a busy CI machine adds some. */
const SLACK_MS = 2_500;

let server: Server;
let port: number;
let key: string;

beforeAll(async () => {
  server = await startServer({
    DATABASE_URL: join(tempDir(), 'p.db'),
    HEADERS_TIMEOUT_SECONDS: String(HEADERS_S),
    REQUEST_TIMEOUT_SECONDS: String(REQUEST_S),
    KEEP_ALIVE_TIMEOUT_SECONDS: String(KEEP_ALIVE_S),
    // Abusers and served clients share one address here, and this suite is about the timeouts; the
    // allowance per address has its own test (test/http/raw-requests.test.ts).
    MAX_CONNECTIONS_PER_ADDRESS: '100000',
  });
  port = Number(new URL(server.url).port);
  key = /^ {2}business +(pet_[A-Za-z0-9_-]{32})$/m.exec(server.output())![1]!;
});
// Its exit code is shutdown.test.ts's subject, with a process signalled directly.
afterAll(async () => void (await server.stop()));

interface Abuser {
  socket: Socket;
  /** When the server closed the connection, in ms after it was opened, and what it had sent. */
  closed: Promise<{ afterMs: number; received: string }>;
}

async function open(): Promise<Abuser> {
  const socket = connect({ port, host: '127.0.0.1' });
  const opened = Date.now();
  let received = '';
  socket.on('data', (d) => (received += d));
  socket.on('error', () => {});
  const closed = new Promise<{ afterMs: number; received: string }>((resolve) =>
    socket.on('close', () => resolve({ afterMs: Date.now() - opened, received })),
  );
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return { socket, closed };
}

/** Sends `text` one byte every `everyMs`, for as long as the socket stays open. */
function dribble(socket: Socket, text: string, everyMs = 100): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) return clearInterval(timer);
    socket.write(text[i++ % text.length]!);
  }, everyMs);
}

/** A well-behaved client, meanwhile: every answer a 200, and fast. */
async function normalClientServed(requests = 10): Promise<number[]> {
  const took: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = Date.now();
    const response = await fetch(`${server.url}/pets/1`, {
      headers: { 'x-api-key': key },
      signal: AbortSignal.timeout(5_000),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    took.push(Date.now() - started);
    await new Promise((r) => setTimeout(r, 50));
  }
  return took;
}

function expectCutOffAfter(timeoutS: number, results: { afterMs: number; received: string }[]): void {
  for (const { afterMs, received } of results) {
    expect(afterMs).toBeGreaterThanOrEqual(timeoutS * 1000 - 100);
    expect(afterMs).toBeLessThan(timeoutS * 1000 + SLACK_MS);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  }
}

describe('abusive connections', () => {
  it('slowloris: 300 connections sending headers a byte at a time are cut off after HEADERS_TIMEOUT_SECONDS; others are served', async () => {
    const abusers = await Promise.all(Array.from({ length: 300 }, () => open()));
    for (const { socket } of abusers) {
      socket.write('GET /pets HTTP/1.1\r\nHost: localhost\r\n');
      dribble(socket, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n');
    }
    const took = await normalClientServed();
    expect(Math.max(...took)).toBeLessThan(1_000);
    expectCutOffAfter(HEADERS_S, await Promise.all(abusers.map((a) => a.closed)));
  });

  it('slow bodies: 200 requests whose body comes a byte at a time are cut off after REQUEST_TIMEOUT_SECONDS; others are served', async () => {
    const body = JSON.stringify({ petId: 1, quantity: 1, padding: 'x'.repeat(200) });
    const abusers = await Promise.all(Array.from({ length: 200 }, () => open()));
    for (const { socket } of abusers) {
      socket.write(
        `POST /store/orders HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      dribble(socket, body);
    }
    const took = await normalClientServed();
    expect(Math.max(...took)).toBeLessThan(1_000);
    expectCutOffAfter(REQUEST_S, await Promise.all(abusers.map((a) => a.closed)));
  });

  it('2,000 idle connections that never send a byte: others are served, and each is closed after HEADERS_TIMEOUT_SECONDS', async () => {
    const idle: Abuser[] = [];
    // In batches, so that the listen backlog never overflows (a dropped SYN waits a second to retry).
    for (let batch = 0; batch < 10; batch++)
      idle.push(...(await Promise.all(Array.from({ length: 200 }, () => open()))));
    const took = await normalClientServed();
    expect(Math.max(...took)).toBeLessThan(1_000);
    const results = await Promise.all(idle.map((a) => a.closed));
    expect(results).toHaveLength(2_000);
    for (const { afterMs, received } of results) {
      expect(afterMs).toBeLessThan(HEADERS_S * 1000 + SLACK_MS + 1_000);
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
    }
  });

  it('an idle kept-alive connection is closed after KEEP_ALIVE_TIMEOUT_SECONDS', async () => {
    const { socket, closed } = await open();
    socket.write(`GET /pets/1 HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${key}\r\n\r\n`);
    const { afterMs, received } = await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toMatch(/keep-alive: timeout=1\r\n/i);
    expect(afterMs).toBeGreaterThanOrEqual(KEEP_ALIVE_S * 1000 - 100);
    expect(afterMs).toBeLessThan(KEEP_ALIVE_S * 1000 + SLACK_MS);
  });

  it('the timeouts are configuration, checked at start-up', async () => {
    const run = await runBuilt(BUILT.service, [], {
      DATABASE_URL: join(tempDir(), 'p.db'),
      HEADERS_TIMEOUT_SECONDS: '40',
      REQUEST_TIMEOUT_SECONDS: '30',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/HEADERS_TIMEOUT_SECONDS: may not exceed REQUEST_TIMEOUT_SECONDS/);
  });
});
