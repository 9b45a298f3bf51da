import { Command } from 'commander';
import type { Clock } from './clock.js';
import { ConfigError, loadConfig } from './config.js';
import type { Env } from './config-values.js';
import { type Db, openDatabase } from './db/database.js';
import { migrate } from './db/migrations.js';
import { keysCommand } from './keys/cli.js';
import { KeyInputError, KeysRepository } from './keys/repository.js';
import { ordersCommand } from './orders/cli.js';
import { OrdersRepository } from './orders/repository.js';
import { conformanceCommand } from './conformance/cli.js';
import { reportCardCommand } from './report-card/cli.js';
import { webhooksCommand } from './webhooks/cli.js';
import { eventsCommand } from './event-stream/cli.js';

export interface CommandLine {
  /** The environment it reads (DATABASE_URL…). */
  env: Env;
  clock: Clock;
  /** Where its output and its errors are written, as they come. */
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * `petstore …` (./cli.ts runs it in its own process): the administration commands, on the same
 * DATABASE_URL as the server, and `report-card` and `events tail`, clients of a running service over HTTP.
 * Resolves with the exit code: 0, 1 for a refusal (an unknown key, a bad limit, a bad DATABASE_URL), a report
 * card with a failed check or a stream that could not be followed, 2 for a usage error or a card that could not
 * be read; what it says goes to `stdout` and `stderr`.
 */
export async function runCommandLine(
  args: readonly string[],
  { env, clock, stdout, stderr }: CommandLine,
): Promise<number> {
  let db: Db | undefined;
  const store = async (): Promise<Db> => {
    if (db) return db;
    const { database } = loadConfig(env);
    db = openDatabase(database);
    await migrate(db, database.kind);
    return db;
  };
  const repository = async () => new KeysRepository(await store(), clock);
  const orderStores = async () => ({ keys: await repository(), orders: new OrdersRepository(await store()) });
  const out = (text: string) => stdout(`${text}\n`);
  const err = (text: string) => stderr(`${text}\n`);
  // What a command that decides its own exit code (report-card, events tail) said.
  let exitCode = 0;
  const program = new Command('petstore')
    .description('Petstore administration')
    .addCommand(keysCommand(repository, { out }))
    .addCommand(ordersCommand(orderStores, { out }))
    .addCommand(webhooksCommand({ out }, clock))
    .addCommand(reportCardCommand({ out, err, exit: (code) => void (exitCode = code) }))
    .addCommand(eventsCommand({ out, err, exit: (code) => void (exitCode = code) }))
    .addCommand(conformanceCommand({ out, err, exit: (code) => void (exitCode = code), env, clock }));
  // Usage errors throw (and exit 2) instead of exiting from deep
  // inside commander; help and usage go where the output goes.
  const everyCommand = (c: Command): Command[] => [c, ...c.commands.flatMap(everyCommand)];
  for (const command of everyCommand(program))
    command.exitOverride().configureOutput({ writeOut: stdout, writeErr: stderr });
  try {
    await program.parseAsync(args, { from: 'user' });
    return exitCode;
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return 0;
    if (code.startsWith('commander.')) return 2;
    if (error instanceof KeyInputError || error instanceof ConfigError) {
      stderr(`petstore: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await db?.destroy();
  }
}
