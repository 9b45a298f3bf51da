import { Command, InvalidArgumentError } from 'commander';
import { describeProfile, type FaultProfileInput, parseLatency } from '../faults/profile.js';
import { isPlanName, PLAN_NAMES, type PlanName } from '../ratelimit/plans.js';
import { NEWEST_VERSION, VERSIONS } from '../versions/versions.js';
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
  const command = new Command('keys').description(
    "create, list, re-plan, re-version, revoke and unban API keys, and set test keys' faults",
  );
  const cli: KeysCli = {
    keys,
    print: (json, value, human) => io.out(json ? JSON.stringify(value) : human),
    printRecord: (json, record) => io.out(json ? JSON.stringify(keyView(record, null)) : describe(record)),
    found: (record, id) => {
      if (!record) throw new KeyInputError(`there is no key ${id}`);
      return record;
    },
  };
  createCommand(command, cli);
  setFaultsCommand(command, cli);
  listCommand(command, cli);
  setPlanCommand(command, cli);
  setVersionCommand(command, cli);
  revokeAndUnbanCommands(command, cli);
  return command;
}

/** What each subcommand shares: the store, and how it prints. */
interface KeysCli {
  keys: () => Promise<KeysRepository>;
  print(json: boolean, value: object, human: string): void;
  printRecord(json: boolean, record: KeyRecord): void;
  found(record: KeyRecord | undefined, id: string): KeyRecord;
}

function createCommand(command: Command, { keys, print }: KeysCli): void {
  const create = command
    .command('create')
    .description('create a key; the full key is printed this once')
    .requiredOption('--plan <plan>', `one of ${PLAN_NAMES.join(', ')}`, planArg)
    .option('--name <name>', 'a name to recognise the key by')
    .option('--per-minute <n>', 'enterprise only: requests per minute', positiveInt)
    .option('--per-day <n>', 'enterprise only: requests per day', positiveInt)
    .option('--test', 'a test key (pet_test_…): same plans and limits, its own orders, faults on demand with Prefer')
    .option(
      '--api-version <version>',
      `the version its requests get when they name none: ${VERSIONS.join(', ')} (default ${NEWEST_VERSION})`,
    )
    .option('--json', 'print one JSON object');
  withFaultOptions(create).action(
    async (
      o: {
        plan: PlanName;
        name?: string;
        perMinute?: number;
        perDay?: number;
        test?: boolean;
        apiVersion?: string;
        json?: boolean;
      } & FaultOptions,
    ) => {
      const { record, key } = await (await keys()).create({ ...o, faults: faultsOf(o) });
      print(
        !!o.json,
        { ...keyView(record, null), key },
        `${key}\n${describe(record)}\nKeep the key now: it is not stored and cannot be shown again.`,
      );
    },
  );
}

function setFaultsCommand(command: Command, { keys, printRecord, found }: KeysCli): void {
  withFaultOptions(
    command
      .command('set-faults <id>')
      .description(
        "set a test key's standing fault profile (its seeded sequence starts over), or remove it with --none",
      )
      .option('--none', 'remove the profile')
      .option('--json', 'print one JSON object'),
  ).action(async (id: string, o: FaultOptions & { none?: boolean; json?: boolean }) => {
    const faults = faultsOf(o);
    if (!faults && !o.none)
      throw new KeyInputError('give --fault-rate (and optionally --faults, --latency, --seed), or --none', 'faults');
    printRecord(!!o.json, found(await (await keys()).setFaults(id, o.none ? null : faults!), id));
  });
}

function listCommand(command: Command, { keys, print }: KeysCli): void {
  command
    .command('list')
    .description('list keys (never the keys themselves)')
    .option('--json', 'print one JSON array')
    .action(async (o: { json?: boolean }) => {
      const records = await (await keys()).list();
      print(
        !!o.json,
        records.map((record) => keyView(record, null)),
        records.map(describe).join('\n') || 'no keys',
      );
    });
}

function setPlanCommand(command: Command, { keys, printRecord, found }: KeysCli): void {
  command
    .command('set-plan <id> <plan>')
    .description('move a key to another plan, from its next request on')
    .option('--per-minute <n>', 'enterprise only: requests per minute', positiveInt)
    .option('--per-day <n>', 'enterprise only: requests per day', positiveInt)
    .option('--json', 'print one JSON object')
    .action(async (id: string, plan: string, o: { perMinute?: number; perDay?: number; json?: boolean }) => {
      printRecord(
        !!o.json,
        found(await (await keys()).setPlan(id, { plan: planArg(plan), perMinute: o.perMinute, perDay: o.perDay }), id),
      );
    });
}

function setVersionCommand(command: Command, { keys, printRecord, found }: KeysCli): void {
  command
    .command('set-version <id> <version>')
    .description(
      `pin a key to another version (${VERSIONS.join(', ')}): its requests that name none get it from their next one on`,
    )
    .option('--json', 'print one JSON object')
    .action(async (id: string, version: string, o: { json?: boolean }) => {
      printRecord(!!o.json, found(await (await keys()).setVersion(id, version), id));
    });
}

function revokeAndUnbanCommands(command: Command, { keys, printRecord, found }: KeysCli): void {
  for (const [name, description, act] of [
    ['revoke', 'revoke a key: it is refused from its next request on', (r: KeysRepository, id: string) => r.revoke(id)],
    [
      'unban',
      'lift the temporary ban of a key (and forgive the 429s that led to it)',
      (r: KeysRepository, id: string) => r.requestUnban(id),
    ],
  ] as const) {
    command
      .command(`${name} <id>`)
      .description(description)
      .option('--json', 'print one JSON object')
      .action(async (id: string, o: { json?: boolean }) =>
        printRecord(!!o.json, found(await act(await keys(), id), id)),
      );
  }
}

function describe(r: KeyRecord): string {
  const limits = r.plan === 'enterprise' ? ` (${r.perMinute}/min, ${r.perDay}/day)` : '';
  const test = r.test ? `  TEST${r.faults ? ` (faults: ${describeProfile(r.faults)})` : ''}` : '';
  return `${r.id}  ${r.prefix}  ${r.plan}${limits}  "${r.name}"  version ${r.apiVersion}  created ${r.createdAt}${test}${r.revokedAt ? `  REVOKED ${r.revokedAt}` : ''}`;
}

interface FaultOptions {
  faultRate?: number;
  faults?: string[];
  latency?: { min: number; max: number };
  seed?: number;
}

/** The options of a standing fault profile (faults/profile.ts), for `create --test` and `set-faults`. */
function withFaultOptions(command: Command): Command {
  return command
    .option('--fault-rate <r>', 'test keys: the share of requests that fail on their own, 0 to 1', rate)
    .option(
      '--faults <list>',
      'test keys: which faults they draw from, comma-separated (default 503,500,429,reset)',
      (v: string) => v.split(','),
    )
    .option('--latency <ms>', 'test keys: every request waits this long, in milliseconds: 120 or 50-400', latency)
    .option('--seed <n>', 'test keys: the seed of the fault sequence, to replay a run (default: random)', wholeNumber);
}

function faultsOf(o: FaultOptions): FaultProfileInput | undefined {
  if (o.faultRate === undefined) {
    if (o.faults || o.latency || o.seed !== undefined)
      throw new KeyInputError('--faults, --latency and --seed need --fault-rate (0 for latency alone)', 'faults');
    return undefined;
  }
  return { rate: o.faultRate, faults: o.faults, latencyMs: o.latency, seed: o.seed };
}

function rate(value: string): number {
  if (!/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(value)) throw new InvalidArgumentError('expected a number from 0 to 1');
  return Number(value);
}

function latency(value: string): { min: number; max: number } {
  const parsed = parseLatency(value);
  if (!parsed) throw new InvalidArgumentError('expected milliseconds: 120 or 50-400');
  return parsed;
}

function wholeNumber(value: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(value)) throw new InvalidArgumentError('expected a whole number');
  return Number(value);
}

function planArg(value: string): PlanName {
  if (!isPlanName(value)) throw new InvalidArgumentError(`expected one of ${PLAN_NAMES.join(', ')}`);
  return value;
}

function positiveInt(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError('expected a positive whole number');
  return Number(value);
}
