import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { testApp } from '../helpers/app.js';
import { TEST_STORE } from '../helpers/database.js';
import { type TestApp } from '../helpers/app.js';

/**
 * What memory answers (keys, pets, pages of orders) must hear of every change made outside this process
 * before it answers again: an order another process wrote to the store is seen at the next request,
 * and on a SQLite file shared with the CLI a revocation committed while a turn of the event loop is
 * read holds for every request sent after it (src/http/server.ts: one look at the store's news per turn).
 */

const apps: TestApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((t) => t.close()));
});

describe('what memory answers', () => {
  it('sees an order another process wrote to the store at its next request', async () => {
    // On SQLite, a file another process can open (the CLI, an operator's sqlite3); on PostgreSQL, the suite's schema.
    const file =
      TEST_STORE === 'sqlite' ? join(mkdtempSync(join(tmpdir(), 'petstore-turns-')), 'petstore.db') : undefined;
    const t = await testApp({ sqliteFile: file, overSocket: true });
    apps.push(t);
    const key = await t.newKey('free');
    const { id } = (await t.keys.findByKey(key))!;
    const list = async () =>
      JSON.parse((await t.request({ url: '/store/orders', headers: { 'x-api-key': key } })).body).data as unknown[];
    // Read twice: the second answer is the page memory keeps (on SQLite, orders/order-pages.ts).
    expect(await list()).toEqual([]);
    expect(await list()).toEqual([]);
    const row = [id, '2026-12-01T00:00:00.000Z', 'placed', '2026-11-23T00:00:00.000Z'];
    const insert = 'insert into orders (api_key_id, pet_id, quantity, ship_date, status, complete, created_at) values';
    if (file) {
      const other = new DatabaseSync(file);
      other.prepare(`${insert} (?, 1, 1, ?, ?, 0, ?)`).run(...row);
      other.close();
    } else {
      const other = new pg.Client({ connectionString: t.databaseUrl });
      await other.connect();
      await other.query(`${insert} ($1, 1, 1, $2, $3, 0, $4)`, row);
      await other.end();
    }
    expect(await list()).toHaveLength(1);
    expect(await list()).toHaveLength(1);
  });
});

// The service asks the SQLite file for news once for the requests read in one turn of the event loop.
if (TEST_STORE === 'sqlite')
  describe('on a SQLite file shared with the CLI', () => {
    // `/pets/1` answered from memory; with a query string, validated as one: both trust the turn's look.
    it.each(['/pets/1', '/pets/1?'])(
      'sees a revocation committed while a turn is read, at every request sent after it (%s)',
      async (path) => {
        const file = join(mkdtempSync(join(tmpdir(), 'petstore-turns-')), 'petstore.db');
        const t = await testApp({ sqliteFile: file });
        apps.push(t);
        const key = await t.newKey('pro');
        const { id } = (await t.keys.findByKey(key))!;
        const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
        // The key and the pet in memory.
        expect((await fetch(`${base}/pets/1`, { headers: { 'x-api-key': key } })).status).toBe(200);
        const get = (requestId: string, url = '/pets/1') =>
          `GET ${url} HTTP/1.1\r\nHost: petstore.test\r\nX-API-Key: ${key}\r\nX-Request-Id: ${requestId}\r\n\r\n`;
        const { port } = new URL(base);
        const [first, second] = await Promise.all([opened(Number(port)), opened(Number(port))]);
        // Both connections accepted and read by the server.
        first.socket.write(get('first'));
        second.socket.write(get('second'));
        await Promise.all([first.answers(1), second.answers(1)]);
        const cli = new DatabaseSync(file);
        // `a` and `b` are on their way together, so the server reads them in one turn, `a` first. While it
        // reads `a`, the CLI revokes the key and then the client sends `c` behind `b`: the server reads `c`
        // with `b`, in the same turn, after the commit. A look at the file taken for `a` would let `c` in.
        t.app.server.on('request', (req: { headers: Record<string, unknown> }) => {
          if (req.headers['x-request-id'] !== 'a') return;
          cli.prepare('update api_keys set revoked_at = ? where id = ?').run('2026-11-25T00:00:00.000Z', id);
          second.socket.write(get('c', path));
        });
        first.socket.write(get('a'));
        second.socket.write(get('b'));
        const answers = { ...(await first.answers(2)), ...(await second.answers(3)) };
        cli.close();
        first.socket.destroy();
        second.socket.destroy();
        expect(answers.c).toBe(401);
        // `a` and `b` were sent before the commit: either answer is right.
        expect([200, 401]).toContain(answers.a);
        expect([200, 401]).toContain(answers.b);
        // And the key stays revoked.
        expect((await fetch(`${base}/pets/1`, { headers: { 'x-api-key': key } })).status).toBe(401);
      },
    );
  });

/** A raw connection to `port`, and the statuses of the answers it has received (at least `n`), by their request ids. */
async function opened(port: number): Promise<{ socket: Socket; answers(n: number): Promise<Record<string, number>> }> {
  // No Nagle: a request written while the one before is unacknowledged leaves at once.
  const socket = connect({ port, host: '127.0.0.1', noDelay: true });
  await new Promise((resolve) => socket.once('connect', resolve));
  let text = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
  const parsed = () =>
    [...text.matchAll(/HTTP\/1\.1 (\d{3})[^]*?\r\nx-request-id: ([^\r]+)/gi)].map(
      ([, status, id]) => [id!, Number(status)] as const,
    );
  return {
    socket,
    async answers(n) {
      while (parsed().length < n) await new Promise((resolve) => socket.once('data', resolve));
      return Object.fromEntries(parsed());
    },
  };
}
