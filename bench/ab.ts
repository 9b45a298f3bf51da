/**
 * `npm run bench:ab -- REF`: this build against the build of git REF (a commit, a branch, `HEAD~1`),
 * `GET /pets/{petId}` over 500 keys, by turns (bench/load.ts `byTurns`: between two runs a minute
 * apart the machine drifts by far more than a change of a few per cent, which shows only by turns).
 * Prints the median of the rounds' req/s of this build over REF's, and each build's CPU µs per request
 * and the whole machine's. With DATABASE_URL=postgres://… and REDIS_URL both builds run scaled-out (a
 * schema both share, a Redis key prefix each), else embedded (a fresh SQLite file each, the same keys
 * in both). AB_ROUNDS (default 8) and AB_SECONDS (default 3) set the rounds; AB_PATH another GET path,
 * or `POST /store/orders` (the bench's order, over 500 other keys), or `banned` (`GET /pets/1` from a
 * free key banned for the whole run, in both: the `429` of a ban); AB_ENV more settings for both
 * builds, as NAME=value separated by spaces (`AB_ENV='TRUST_PROXY=127.0.0.1'`), and AB_REF_ENV for REF's
 * build only.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { postgresSchema } from '../test/helpers/database.js';
import { postOrder } from './mode-run.js';
import { byTurns, oneAtATime, type Requests } from './load.js';
import { ROOT, startService } from './service.js';
import { createKeys, sqliteFile } from './setup.js';

const ref = process.argv[2];
if (!ref) throw new Error('usage: npm run bench:ab -- REF (a git commit or branch to measure this build against)');
const rounds = Number(process.env.AB_ROUNDS || 8);
const seconds = Number(process.env.AB_SECONDS || 3);
const banned = process.env.AB_PATH === 'banned';
const [method, path] = banned
  ? ['GET', '/pets/1']
  : (process.env.AB_PATH || '/pets/1').startsWith('POST ')
    ? ['POST', process.env.AB_PATH!.slice(5)]
    : ['GET', process.env.AB_PATH || '/pets/1'];

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const tsc = (cwd: string) =>
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd,
    stdio: 'inherit',
  });
const commit = git('rev-parse', '--verify', `${ref}^{commit}`);
const worktree = mkdtempSync(join(tmpdir(), 'petstore-ab-'));
git('worktree', 'add', '--detach', worktree, commit);
const { DATABASE_URL, REDIS_URL } = process.env;
const schema = DATABASE_URL?.startsWith('postgres') && REDIS_URL ? await postgresSchema(DATABASE_URL, 'ab') : null;
try {
  // Both builds with this tree's dependencies: what is compared is the code.
  symlinkSync(join(ROOT, 'node_modules'), join(worktree, 'node_modules'));
  tsc(worktree);
  tsc(ROOT);
  const database = schema ? schema.url : sqliteFile();
  // Embedded, each build writes a store of its own (two writers on one SQLite file would wait for each other).
  const own = schema ? database : sqliteFile();
  const settings = (list = '') =>
    Object.fromEntries(
      list
        .split(' ')
        .filter(Boolean)
        .map((pair) => pair.split('=', 2) as [string, string]),
    );
  const env = (name: string): Record<string, string> => ({
    // A ban longer than the run: every request of the run meets it.
    ...(banned ? { BAN_FIRST_SECONDS: '3600', BAN_MAX_SECONDS: '3600' } : {}),
    ...settings(process.env.AB_ENV),
    ...(name === 'ref' ? settings(process.env.AB_REF_ENV) : {}),
    ...(schema
      ? {
          DATABASE_URL: database,
          REDIS_URL: REDIS_URL!,
          REDIS_KEY_PREFIX: `bench-ab-${name}-${randomBytes(4).toString('hex')}:`,
        }
      : { DATABASE_URL: name === 'ref' ? database : own, REDIS_URL: '' }),
  });
  // Each build migrates the store it opens (REF's may know fewer migrations than this one's); the keys
  // are made by this build, once both have, and copied to REF's store (embedded).
  const before = await startService(env('ref'), join(worktree, 'dist/main.js'));
  const after = await startService(env('this'));
  const keys = await createKeys(own, { perPath: 500, limited: 0 });
  if (own !== database) copyRows(own, database, ['api_keys', 'orders']);
  try {
    const requests: Requests = banned
      ? [{ method: 'GET', path, headers: { 'x-api-key': keys.banned } }]
      : method === 'POST'
        ? keys.placeOrders.map((key) => postOrder(path, key))
        : keys.pets.map((key) => ({ method: 'GET', path, headers: { 'x-api-key': key } }));
    // Banned: the free plan's 60 a minute, then the rejections that start the ban.
    for (const target of [before, after]) await oneAtATime(target.url, requests, banned ? 100 : requests.length);
    const turns = await byTurns(before, after, requests, 50, rounds, seconds);
    const { cpuUsPerRequest: cpu, machineUsPerRequest: machine } = turns;
    console.log(
      `${schema ? 'scaled-out' : 'embedded'} ${banned ? 'banned ' : ''}${method} ${path}${process.env.AB_ENV ? ` (${process.env.AB_ENV})` : ''}${process.env.AB_REF_ENV ? ` (${ref}: ${process.env.AB_REF_ENV})` : ''}, this build (${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain') ? ' and changes' : ''}) against ${ref} (${commit.slice(0, 7)}), ${rounds} rounds of ${seconds} s by turns:`,
    );
    console.log(`  req/s, this ÷ ${ref}: median ${turns.median} (rounds ${turns.ratios.join(', ')})`);
    console.log(`  CPU µs/req, service: ${cpu.a} → ${cpu.b}; whole machine: ${machine.a} → ${machine.b}`);
    console.log(`  statuses: ${JSON.stringify(turns.statuses.a)} → ${JSON.stringify(turns.statuses.b)}`);
  } finally {
    await Promise.all([before.stop(), after.stop()]);
  }
} finally {
  await schema?.drop();
  git('worktree', 'remove', '--force', worktree);
  rmSync(worktree, { recursive: true, force: true });
}

/** The rows of `tables` from one SQLite store into another, in the columns both have (REF's may lack newer ones). */
function copyRows(from: string, to: string, tables: string[]): void {
  const connection = new DatabaseSync(to);
  try {
    connection.prepare('attach database ? as source').run(from);
    const columnsOf = (schema: string, table: string) =>
      new Set(
        (connection.prepare(`pragma ${schema}.table_info(${table})`).all() as Array<{ name: string }>).map(
          (column) => column.name,
        ),
      );
    for (const table of tables) {
      const theirs = columnsOf('main', table);
      const common = [...columnsOf('source', table)].filter((name) => theirs.has(name)).join(', ');
      connection.exec(`insert into main.${table} (${common}) select ${common} from source.${table}`);
    }
  } finally {
    connection.close();
  }
}
