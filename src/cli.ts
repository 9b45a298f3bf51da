import { Command } from 'commander';
import { type Clock, systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config.js';
import { type Db, openDatabase } from './db/database.js';
import { migrate } from './db/migrations.js';
import { keysCommand } from './keys/cli.js';
import { KeyInputError, KeysRepository } from './keys/repository.js';
import { ordersCommand } from './orders/cli.js';
import { OrdersRepository } from './orders/repository.js';
import { webhooksCommand } from './webhooks/cli.js';

/** `petstore`: the command line, on the same DATABASE_URL as the server. */
async function run(argv: string[], clock: Clock): Promise<number> {
  let db: Db | undefined;
  const store = async (): Promise<Db> => {
    if (db) return db;
    const { database } = loadConfig();
    db = openDatabase(database);
    await migrate(db, database.kind);
    return db;
  };
  const repository = async () => new KeysRepository(await store(), clock);
  const orderStores = async () => ({ keys: await repository(), orders: new OrdersRepository(await store()) });
  const out = (text: string) => process.stdout.write(`${text}\n`);
  const program = new Command('petstore')
    .description('Petstore administration')
    .exitOverride()
    .addCommand(keysCommand(repository, { out }))
    .addCommand(ordersCommand(orderStores, { out }))
    .addCommand(webhooksCommand({ out }, clock));
  // Usage errors throw (and exit 2) instead of exiting from deep inside commander.
  const everyCommand = (c: Command): Command[] => [c, ...c.commands.flatMap(everyCommand)];
  for (const command of everyCommand(program)) command.exitOverride();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return 0;
    if (code.startsWith('commander.')) return 2;
    if (error instanceof KeyInputError || error instanceof ConfigError) {
      process.stderr.write(`petstore: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await db?.destroy();
  }
}

run(process.argv, systemClock).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`petstore: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
