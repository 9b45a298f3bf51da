import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';

/**
 * Processes that open a new SQLite file at the same moment (a server and the CLI, which may share a file,
 * or two instances: docs/operations.md#the-store) migrate it one after the other: each migration is applied once and
 * none fails. Each "process" here is a thread with its own connection to the file, running the built
 * store code; they are held at a gate and let go together, so that they race for real every time.
 */

const OPENERS = 6;
const ROUNDS = 10;

const WORKER = `
import { parentPort, workerData } from 'node:worker_threads';
const { openDatabase } = await import(workerData.database);
const { migrate } = await import(workerData.migrations);
const db = openDatabase({ kind: 'sqlite', file: workerData.file });
parentPort.postMessage('ready');
Atomics.wait(new Int32Array(workerData.gate), 0, 0);
try {
  await migrate(db, 'sqlite');
  const { n } = await db.selectFrom('kysely_migration').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  const pets = await db.selectFrom('pets').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  parentPort.postMessage({ applied: Number(n), pets: Number(pets.n) });
} catch (error) {
  parentPort.postMessage({ error: String(error.message ?? error) });
} finally {
  await db.destroy();
}
`;

describe('a new SQLite file opened by several processes at the same moment', () => {
  it(`is migrated once: ${OPENERS} openers let go together, ${ROUNDS} times, none fails`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-store-start-'));
    const script = join(dir, 'opener.mjs');
    writeFileSync(script, WORKER);
    const modules = {
      database: pathToFileURL(join(ROOT, 'dist/db/database.js')).href,
      migrations: pathToFileURL(join(ROOT, 'dist/db/migrations.js')).href,
    };
    for (let round = 0; round < ROUNDS; round++) {
      const gate = new SharedArrayBuffer(4);
      const file = join(dir, `store-${round}.db`);
      const workers = Array.from(
        { length: OPENERS },
        () => new Worker(script, { workerData: { ...modules, file, gate } }),
      );
      const answers = workers.map(
        (worker) =>
          new Promise<unknown[]>((resolve, reject) => {
            const said: unknown[] = [];
            worker.on('message', (message) => said.push(message));
            worker.on('error', reject);
            worker.on('exit', () => resolve(said));
          }),
      );
      const ready = workers.map((worker) => new Promise((resolve) => worker.once('message', resolve)));
      await Promise.all(ready);
      Atomics.store(new Int32Array(gate), 0, 1);
      Atomics.notify(new Int32Array(gate), 0);
      const outcomes = (await Promise.all(answers)).map((said) => said[1]);
      const first = outcomes[0] as { applied: number; pets: number };
      expect(first.applied).toBeGreaterThan(5);
      expect(outcomes, `round ${round + 1}`).toEqual(
        Array.from({ length: OPENERS }, () => ({ applied: first.applied, pets: first.pets })),
      );
    }
  }, 60_000);
});
