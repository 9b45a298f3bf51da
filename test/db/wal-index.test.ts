import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Db, openDatabase, sqliteHandleOf } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrations.js';
import { WalIndexHeader } from '../../src/db/wal-index.js';
import { tempDir } from '../helpers/process.js';

const opened: Db[] = [];
afterEach(async () => {
  for (const db of opened.splice(0).reverse()) await db.destroy();
});

function open(file: string): Db {
  const db = openDatabase({ kind: 'sqlite', file });
  opened.push(db);
  return db;
}

// The change feed's first question on SQLite (db/change-feed.ts): has anyone committed since last time?
describe('the WAL-index header of a SQLite file', () => {
  it('reads unchanged until a commit, by this connection or another, and changed once after each', async () => {
    const file = join(tempDir(), 'petstore.db');
    const ours = open(file);
    await migrate(ours, 'sqlite');
    const other = open(file);
    const header = WalIndexHeader.of(sqliteHandleOf(ours))!;
    expect(header).not.toBeNull();
    header.unchanged();
    expect(header.unchanged()).toBe(true);
    await ours.selectFrom('pets').selectAll().execute();
    expect(header.unchanged()).toBe(true);

    await other.updateTable('pets').set({ name: 'Renamed elsewhere' }).where('id', '=', 1).execute();
    expect(header.unchanged()).toBe(false);
    expect(header.unchanged()).toBe(true);

    await ours.updateTable('pets').set({ name: 'Renamed here' }).where('id', '=', 1).execute();
    expect(header.unchanged()).toBe(false);
    expect(header.unchanged()).toBe(true);
  });

  it('does not exist for a store in memory: there, data_version is asked every time', () => {
    expect(WalIndexHeader.of(sqliteHandleOf(open(':memory:')))).toBeNull();
  });
});
