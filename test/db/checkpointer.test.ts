import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkpointInBackground } from '../../src/db/checkpointer.js';
import { type Db, openDatabase, sqliteHandleOf } from '../../src/db/database.js';
import { pragma } from '../../src/db/sqlite.js';

const warnings: string[] = [];
const log = { warn: (_: object, message: string) => void warnings.push(message) };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  warnings.length = 0;
});

function store(): { db: Db; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-checkpoints-'));
  const file = join(dir, 'store.db');
  const db = openDatabase({ kind: 'sqlite', file });
  cleanups.push(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, file };
}

/** A megabyte of log: 1,000 rows of 1 KB, committed 100 at a time. */
function writeMegabyte(db: Db): void {
  const connection = sqliteHandleOf(db);
  connection.exec('create table if not exists filler (bytes blob not null)');
  const insert = connection.prepare('insert into filler (bytes) values (?)');
  const hundred = () => {
    connection.exec('begin');
    for (let i = 0; i < 100; i++) insert.run(Buffer.alloc(1024, i));
    connection.exec('commit');
  };
  for (let i = 0; i < 10; i++) hundred();
}

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('not within the time allowed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('checkpoints in the background (embedded store)', () => {
  it('the service connection checkpoints nothing, and the log reaches the store file anyway', async () => {
    const { db, file } = store();
    const checkpoints = checkpointInBackground(db, { intervalMs: 20, log })!;
    cleanups.push(() => checkpoints.close());
    expect(pragma(sqliteHandleOf(db), 'wal_autocheckpoint')).toBe(0);
    const before = statSync(file).size;
    writeMegabyte(db);
    // Only the worker's connection can have copied the log into the store file: nothing else checkpoints.
    await until(() => statSync(file).size >= before + 1_000_000);
    expect(sqliteHandleOf(db).prepare('select count(*) as n from filler').get()?.n).toBe(1000);
    expect(warnings).toEqual([]);
  });

  it('under writes that never pause, the log starts again from its beginning: its file stays small', async () => {
    const { db, file } = store();
    const checkpoints = checkpointInBackground(db, { intervalMs: 20, restartPages: 100, log })!;
    cleanups.push(() => checkpoints.close());
    const connection = sqliteHandleOf(db);
    connection.exec('create table filler (bytes blob not null)');
    const insert = connection.prepare('insert into filler (bytes) values (?)');
    const ten = () => {
      connection.exec('begin');
      for (let i = 0; i < 10; i++) insert.run(Buffer.alloc(1024, i));
      connection.exec('commit');
    };
    // 12 MB in commits of 10 KB, one every millisecond or so: never a pause as long as a checkpoint.
    // Without the restarts the log's file ends at about 30 MB.
    let largest = 0;
    for (let i = 0; i < 1_200; i++) {
      ten();
      largest = Math.max(largest, statSync(`${file}-wal`).size);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    // The restart threshold's 400 KB, and what the writes add while a checkpoint runs (1 MB here).
    expect(largest).toBeLessThan(8_000_000);
    expect(warnings).toEqual([]);
  });

  it('without it, the same writes leave the store file as it was (the log holds them)', async () => {
    const { db, file } = store();
    sqliteHandleOf(db).exec('PRAGMA wal_autocheckpoint = 0');
    const before = statSync(file).size;
    writeMegabyte(db);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(statSync(file).size).toBe(before);
  });

  it('should the worker fail, the service connection checkpoints its log itself again, and says so', async () => {
    const { db, file } = store();
    // A worker that cannot even open the store: it fails at once, as a crashed one would.
    const checkpoints = checkpointInBackground(db, {
      intervalMs: 20,
      log,
      script: pathToFileURL(join(tmpdir(), 'no-such-checkpoint-worker.mjs')),
    })!;
    cleanups.push(() => checkpoints.close());
    await until(() => warnings.length > 0);
    expect(warnings).toEqual(['the background checkpoints stopped; the service checkpoints its log itself again']);
    expect(pragma(sqliteHandleOf(db), 'wal_autocheckpoint')).toBe(1000);
    // SQLite's own checkpoints, in the commit that takes the log past 1,000 pages: 5 MB is past it.
    const before = statSync(file).size;
    for (let i = 0; i < 5; i++) writeMegabyte(db);
    expect(statSync(file).size).toBeGreaterThan(before + 3_000_000);
  });

  it('closes without a warning, and there is nothing to do for a store in memory', async () => {
    const { db } = store();
    const checkpoints = checkpointInBackground(db, { intervalMs: 20, log })!;
    await checkpoints.close();
    await checkpoints.close();
    expect(warnings).toEqual([]);
    const memory = openDatabase({ kind: 'sqlite', file: ':memory:' });
    cleanups.push(() => memory.destroy());
    expect(checkpointInBackground(memory, { log })).toBeNull();
  });

  it('closing holds the process until the worker is gone, when nothing else would (the store then closes)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-checkpoints-'));
    const file = join(dir, 'store.db');
    const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const fixture = fileURLToPath(new URL('./fixtures/checkpointer-alone.ts', import.meta.url));
    const run = spawnSync(process.execPath, ['--import', loader, fixture, file], { encoding: 'utf8', timeout: 30_000 });
    try {
      expect(run.stdout).toBe('closed\n');
      expect(run.status).toBe(0);
      expect(existsSync(`${file}-wal`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
