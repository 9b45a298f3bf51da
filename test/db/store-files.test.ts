import { copyFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { WATCH_MS } from '../../src/db/store-files.js';
import { lookAtStoreFiles } from '../../src/db/database.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { tempDir } from '../helpers/process.js';

/**
 * The embedded store's files deleted or replaced under the running service: the service must not go
 * on serving what it holds (a key revoked through the path would answer `200` for ever). Within a
 * second `/readyz` fails and every request that needs the store is refused with a `503`, also a read
 * memory could answer (`/pets/1`, `/pets/1?`).
 */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Each way of moving the store, and whether the CLI can still change the store the path names afterwards. */
const moves: Record<string, { move: (file: string) => void; cliWrites: boolean }> = {
  'the database file deleted': { move: (file) => unlinkSync(file), cliWrites: false },
  'the database file replaced by another (renamed over it)': {
    move: (file) => {
      copyFileSync(file, `${file}.copy`);
      renameSync(`${file}.copy`, file);
    },
    cliWrites: true,
  },
  'the -shm file deleted': { move: (file) => unlinkSync(`${file}-shm`), cliWrites: true },
  // SQLite then refuses the file to anyone else (a disk I/O error), so only the service could still be fooled.
  'the -wal file deleted': { move: (file) => unlinkSync(`${file}-wal`), cliWrites: false },
};

/** What `petstore keys revoke` does, from another process's connection. */
function revokeAll(file: string): void {
  const cli = new DatabaseSync(file);
  cli.prepare('UPDATE api_keys SET revoked_at = ?').run(new Date().toISOString());
  cli.close();
}

describe('the embedded store moved from under the service', () => {
  it.each(Object.keys(moves))('%s: /readyz fails and requests are refused with 503 within a second', async (move) => {
    const file = join(tempDir(), 'petstore.db');
    t = await testApp({ sqliteFile: file });
    const key = await t.newKey('pro');
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    const get = (path: string) => fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
    for (const path of ['/pets/1', '/pets/1?']) expect((await get(path)).status).toBe(200);
    expect((await t.admin.inject('/readyz')).statusCode).toBe(200);

    const { move: moveFiles, cliWrites } = moves[move]!;
    moveFiles(file);
    // The CLI revokes the key through the path, in files the service no longer has: it must not answer 200.
    if (cliWrites) revokeAll(file);
    // What the watch does every WATCH_MS (well within the promised second), done now.
    lookAtStoreFiles(t.db);
    expect(WATCH_MS).toBeLessThan(1000);

    const ready = await t.admin.inject('/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.database).toBe(false);
    for (const path of ['/pets/1', '/pets/1?']) {
      const response = await get(path);
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.text()).not.toContain(key);
    }
    // Nothing else reads or writes the files either: the admin API, the CLI's repository, the jobs.
    await expect(t.keys.count()).rejects.toMatchObject({ code: 'PETSTORE_STORE_MOVED' });
  });

  it('is not seen while the files stay: a change made through the path applies at the next request', async () => {
    const file = join(tempDir(), 'petstore.db');
    t = await testApp({ sqliteFile: file });
    const key = await t.newKey('pro');
    const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    expect((await fetch(`${base}/pets/1`, { headers: { 'x-api-key': key } })).status).toBe(200);
    revokeAll(file);
    expect((await fetch(`${base}/pets/1`, { headers: { 'x-api-key': key } })).status).toBe(401);
    lookAtStoreFiles(t.db);
    expect((await t.admin.inject('/readyz')).statusCode).toBe(200);
  });
});
