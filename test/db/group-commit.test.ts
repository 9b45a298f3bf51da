import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { type Db, sqliteHandleOf } from '../../src/db/database.js';
import { pragma } from '../../src/db/sqlite.js';
import { transactionsOf } from '../../src/db/group-commit.js';
import { postgresAvailable, type TestDatabase, testDatabase } from '../helpers/database.js';

const dirs: string[] = [];
const opened: TestDatabase[] = [];
afterAll(async () => {
  for (const t of opened) {
    await t.db.destroy();
    await t.drop();
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function store(kind: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-group-commit-'));
  dirs.push(dir);
  const t = await testDatabase({ kind, sqliteFile: join(dir, 'store.db') });
  opened.push(t);
  await sql`create table notes (n integer not null unique)`.execute(t.db);
  return t;
}

const note = (n: number) => async (trx: Db) => {
  await sql`insert into notes (n) values (${n})`.execute(trx);
  return n;
};

async function notes(db: Db): Promise<number[]> {
  const { rows } = await sql<{ n: number }>`select n from notes order by n`.execute(db);
  return rows.map((row) => Number(row.n));
}

const postgres = await postgresAvailable();

const kinds: ('sqlite' | 'postgres')[] = postgres ? ['sqlite', 'postgres'] : ['sqlite'];

describe.each(kinds)('transactions on the %s store', (kind) => {
  it('commits what a unit wrote before it answers, and a unit that throws writes nothing while its neighbours commit', async () => {
    const { db } = await store(kind);
    const transactions = transactionsOf(db);
    const refused = new Error('refused');
    const results = await Promise.allSettled([
      transactions.run(note(1)),
      transactions.run(async (trx) => {
        await note(2)(trx);
        throw refused;
      }),
      transactions.run(note(3)),
    ]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: refused },
      { status: 'fulfilled', value: 3 },
    ]);
    expect(await notes(db)).toEqual([1, 3]);
  });

  it("a unit's own database error (a unique violation) rejects that unit alone", async () => {
    const { db } = await store(kind);
    const transactions = transactionsOf(db);
    await transactions.run(note(7));
    const results = await Promise.allSettled([
      transactions.run(note(8)),
      transactions.run(note(7)),
      transactions.run(note(9)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await notes(db)).toEqual([7, 8, 9]);
  });
});

describe.skipIf(!postgres)('group commit on PostgreSQL', () => {
  it('runs the units that arrive in one turn in one transaction, committed once, and the next turn in another', async () => {
    const { db } = await store('postgres');
    const transactions = transactionsOf(db);
    const inTransaction = (n: number) => async (trx: Db) => {
      await note(n)(trx);
      const { rows } = await sql<{ id: string }>`select txid_current()::text as id`.execute(trx);
      return rows[0]!.id;
    };
    const first = await Promise.all(Array.from({ length: 20 }, (_, i) => transactions.run(inTransaction(i))));
    expect(new Set(first).size).toBe(1);
    const second = await Promise.all([transactions.run(inTransaction(100)), transactions.run(inTransaction(101))]);
    expect(new Set(second).size).toBe(1);
    expect(second[0]).not.toBe(first[0]);
    expect(await notes(db)).toEqual([...Array.from({ length: 20 }, (_, i) => i), 100, 101]);
  });
});

describe('group commit on the embedded store', () => {
  /** Another connection to the same file: what it sees is what is committed. */
  function otherConnection(t: TestDatabase) {
    const other = new DatabaseSync(t.url);
    return {
      /** Rises by one for each commit made by another connection. */
      commits: () => pragma(other, 'data_version') as number,
      notes: () => (other.prepare('select n from notes order by n').all() as { n: number }[]).map((row) => row.n),
      close: () => other.close(),
    };
  }

  it('commits the units that arrive in one turn once, and each is visible to another connection when it resolves', async () => {
    const t = await store('sqlite');
    const other = otherConnection(t);
    try {
      const transactions = transactionsOf(t.db);
      const before = other.commits();
      const seenAtResolve: number[][] = [];
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => transactions.run(note(i)).then(() => seenAtResolve.push(other.notes()))),
      );
      expect(other.commits() - before).toBe(1);
      for (const seen of seenAtResolve) expect(seen).toHaveLength(20);
      // The units that arrive while a group commits wait for the next group.
      const later = transactions.run(note(100));
      const evenLater = new Promise((resolve) => setImmediate(() => resolve(transactions.run(note(101)))));
      expect(await Promise.all([later, evenLater])).toEqual([100, 101]);
      expect(other.notes()).toContain(101);
    } finally {
      other.close();
    }
  });

  it('rejects every unit of a group whose commit fails, writes none of them, and commits the next group', async () => {
    const t = await store('sqlite');
    const other = new DatabaseSync(t.url);
    try {
      sqliteHandleOf(t.db).exec('PRAGMA busy_timeout = 20');
      const transactions = transactionsOf(t.db);
      // Another process holds the write lock: this group cannot write.
      other.exec('begin immediate');
      const results = await Promise.allSettled([transactions.run(note(1)), transactions.run(note(2))]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      other.exec('rollback');
      expect(await notes(t.db)).toEqual([]);
      expect(await Promise.all([transactions.run(note(3)), transactions.run(note(4))])).toEqual([3, 4]);
      expect(await notes(t.db)).toEqual([3, 4]);
    } finally {
      other.close();
    }
  });

  it('a group whose unit reads before it writes waits for another process that holds the write lock, instead of failing', async () => {
    const t = await store('sqlite');
    const transactions = transactionsOf(t.db);
    const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const fixture = fileURLToPath(new URL('./fixtures/hold-write-lock.ts', import.meta.url));
    const holder = spawn(process.execPath, ['--import', loader, fixture, t.url, '300'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(holder, 'exit');
    await once(holder.stdout!, 'data');
    // What placing an order with an Idempotency-Key does: a read, then writes.
    const readThenWrite = async (trx: Db) => {
      const [before] = await notes(trx);
      await note(before === undefined ? 1 : before + 1)(trx);
      return 'written';
    };
    expect(await transactions.run(readThenWrite)).toBe('written');
    await exited;
    expect(await notes(t.db)).toEqual([1]);
  });
});
