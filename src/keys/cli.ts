import { Command, InvalidArgumentError } from 'commander';
import { isPlanName, PLAN_NAMES, type PlanName } from '../ratelimit/plans.js';
import { KeyInputError, type KeyRecord, type KeysRepository } from './repository.js';
import { keyView } from './views.js';

export interface CliIo {
  out: (text: string) => void;
}

/**
 * `petstore keys …`: the admin API's key operations for the terminal, on the same DATABASE_URL as the
 * server. Running servers see every change on the key's next request. Bans live in the servers'
 * limiter, so `unban` is a signal written to the key's row, applied by each server when it sees it.
 */
export function keysCommand(keys: () => Promise<KeysRepository>, io: CliIo): Command {
  const command = new Command('keys').description('create, list, re-plan, revoke and unban API keys');
  const print = (json: boolean, value: object, human: string) => io.out(json ? JSON.stringify(value) : human);
  const shown = (record: KeyRecord) => keyView(record, null);
  const found = (record: KeyRecord | undefined, id: string) => {
    if (!record) throw new KeyInputError(`there is no key ${id}`);
    return record;
  };

  command
    .command('create')
    .description('create a key; the full key is printed this once')
    .requiredOption('--plan <plan>', `one of ${PLAN_NAMES.join(', ')}`, planArg)
    .option('--name <name>', 'a name to recognise the key by')
    .option('--per-minute <n>', 'enterprise only: requests per minute', positiveInt)
    .option('--per-day <n>', 'enterprise only: requests per day', positiveInt)
    .option('--json', 'print one JSON object')
    .action(async (o: { plan: PlanName; name?: string; perMinute?: number; perDay?: number; json?: boolean }) => {
      const { record, key } = await (await keys()).create(o);
      print(!!o.json, { ...shown(record), key }, `${key}\n${describe(record)}\nKeep the key now: it is not stored and cannot be shown again.`);
    });

  command
    .command('list')
    .description('list keys (never the keys themselves)')
    .option('--json', 'print one JSON array')
    .action(async (o: { json?: boolean }) => {
      const records = await (await keys()).list();
      print(!!o.json, records.map(shown), records.map(describe).join('\n') || 'no keys');
    });

  command
    .command('set-plan <id> <plan>')
    .description('move a key to another plan, from its next request on')
    .option('--per-minute <n>', 'enterprise only: requests per minute', positiveInt)
    .option('--per-day <n>', 'enterprise only: requests per day', positiveInt)
    .option('--json', 'print one JSON object')
    .action(async (id: string, plan: string, o: { perMinute?: number; perDay?: number; json?: boolean }) => {
      const record = found(await (await keys()).setPlan(id, { plan: planArg(plan), perMinute: o.perMinute, perDay: o.perDay }), id);
      print(!!o.json, shown(record), describe(record));
    });

  for (const [name, description, act] of [
    ['revoke', 'revoke a key: it is refused from its next request on', (r: KeysRepository, id: string) => r.revoke(id)],
    ['unban', 'lift the temporary ban of a key (and forgive the 429s that led to it)', (r: KeysRepository, id: string) => r.requestUnban(id)],
  ] as const) {
    command
      .command(`${name} <id>`)
      .description(description)
      .option('--json', 'print one JSON object')
      .action(async (id: string, o: { json?: boolean }) => {
        const record = found(await act(await keys(), id), id);
        print(!!o.json, shown(record), describe(record));
      });
  }
  return command;
}

function describe(r: KeyRecord): string {
  const limits = r.plan === 'enterprise' ? ` (${r.perMinute}/min, ${r.perDay}/day)` : '';
  return `${r.id}  ${r.prefix}  ${r.plan}${limits}  "${r.name}"  created ${r.createdAt}${r.revokedAt ? `  REVOKED ${r.revokedAt}` : ''}`;
}

function planArg(value: string): PlanName {
  if (!isPlanName(value)) throw new InvalidArgumentError(`expected one of ${PLAN_NAMES.join(', ')}`);
  return value;
}

function positiveInt(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError('expected a positive whole number');
  return Number(value);
}
