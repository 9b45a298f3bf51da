/**
 * Graceful shutdown under load: on SIGTERM the service stops accepting, lets every request in flight
 * finish with a complete response, resets no connection and exits 0 within SHUTDOWN_TIMEOUT_SECONDS.
 */
import { existsSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, startServer, tempDir } from '../helpers/process.js';

const SHUTDOWN_S = 5;
const IN_FLIGHT = 50;
const LOAD_CLIENTS = 20;

interface Outcome {
  status?: number;
  body?: string;
  error?: string;
}

/** A POST whose headers and half its body go now, and the rest when `finish` is called. */
function slowPost(port: number, key: string, agent: Agent) {
  const body = JSON.stringify({ petId: 1, quantity: 2 });
  let req!: ReturnType<typeof request>;
  const outcome: Promise<Outcome> = new Promise((resolve) => {
    req = request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/store/orders',
        agent,
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
        res.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
      },
    );
    req.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
    req.write(body.slice(0, 10));
  });
  return { outcome, finish: () => req.end(body.slice(10)) };
}

/**
 * Clients that each send GETs back to back on one kept-alive connection of their own, until the
 * server says `Connection: close` (the drain) or something fails; every outcome is kept.
 */
function steadyLoad(port: number, key: string) {
  const outcomes: (Outcome & { close?: boolean })[] = [];
  const one = (agent: Agent) =>
    new Promise<Outcome & { close?: boolean }>((resolve) => {
      const req = request({ port, host: '127.0.0.1', path: '/pets/1', agent, headers: { 'x-api-key': key } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, close: res.headers.connection === 'close' }));
        res.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
      });
      req.on('error', (e) => resolve({ error: (e as NodeJS.ErrnoException).code ?? e.message }));
      req.end();
    });
  const clients = Array.from({ length: LOAD_CLIENTS }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    for (;;) {
      const outcome = await one(agent);
      outcomes.push(outcome);
      if (outcome.error || outcome.close) break;
    }
    agent.destroy();
  });
  return { outcomes, done: Promise.all(clients) };
}

describe('SIGTERM under load', () => {
  it('finishes every request in flight, resets no connection, and exits 0 within SHUTDOWN_TIMEOUT_SECONDS', async () => {
    const databaseUrl = join(tempDir(), 'p.db');
    const server = await startServer({
      DATABASE_URL: databaseUrl,
      DEMO_KEYS: 'false',
      SHUTDOWN_TIMEOUT_SECONDS: String(SHUTDOWN_S),
    });
    const created = await cli(
      ['keys', 'create', '--plan', 'enterprise', '--per-minute', '1000000', '--per-day', '1000000', '--json'],
      {
        DATABASE_URL: databaseUrl,
      },
    );
    const key = (JSON.parse(created.stdout) as { key: string }).key;
    const port = Number(new URL(server.url).port);
    const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

    const load = steadyLoad(port, key);
    const slow = Array.from({ length: IN_FLIGHT }, () => slowPost(port, key, agent));
    // Let the headers arrive and the load run, then signal while all of it is in flight.
    await new Promise((r) => setTimeout(r, 500));
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    for (const post of slow) post.finish();
    const posts = await Promise.all(slow.map((s) => s.outcome));
    await load.done;
    const code = await server.exited;
    const drainMs = Date.now() - signalled;
    agent.destroy();

    expect(posts.filter((p) => p.status !== 201)).toEqual([]);
    for (const post of posts) expect(JSON.parse(post.body!)).toMatchObject({ petId: 1, quantity: 2, status: 'placed' });
    // The steady load: complete answers, the last one closing the connection; never a reset.
    expect(load.outcomes.filter((o) => o.error)).toEqual([]);
    expect(load.outcomes.filter((o) => o.status !== 200)).toEqual([]);
    expect(load.outcomes.filter((o) => o.close)).toHaveLength(LOAD_CLIENTS);
    expect(code).toBe(0);
    expect(drainMs).toBeLessThan(SHUTDOWN_S * 1000);
    // The store was closed on the way out: SQLite removes its log when the last connection closes.
    expect(existsSync(`${databaseUrl}-wal`)).toBe(false);
  });
});
