import { writeFile } from 'node:fs/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Clock } from '../clock.js';
import { baseUrl } from '../report-card/cli.js';
import type { Scenario, ScenarioCatalogue } from '../scenarios/schemas.js';
import { junitXml, markdownSummary, type RunReport, table } from './reports.js';
import { type RunContext, runScenario, type Verdict } from './scenario-run.js';
import { Service, ServiceError } from './service.js';
import { processInterrupt } from '../ops/interrupt.js';

export interface ConformanceIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** 0 when every scenario passed, 1 when one failed, 2 when the run could not be made. */
  exit: (code: number) => void;
  /** The environment the command under test starts from. */
  env: NodeJS.ProcessEnv;
  /** Default: the built-in `fetch`. */
  fetch?: typeof fetch;
  /** The real time: the runner's waits and its report's times. */
  clock: Clock;
  /** Aborted to interrupt the run (default: the process's `SIGINT` or `SIGTERM`, e.g. Ctrl-C). */
  interrupt?: AbortSignal;
}

interface Options {
  url: string;
  key: string;
  command: string;
  scenario: string[];
  jobs: number;
  timeout: number;
  receiverUrl?: string;
  junit?: string;
  summary?: string;
  json?: boolean;
}

/** A run that cannot be made: one line, exit code 2. */
class CannotRun extends Error {}

/**
 * `petstore conformance` (docs/testing-clients.md#running-a-clients-conformance-suite): the catalogue's scenarios
 * run against a client, each with a child test key of its own, for the client's CI. Writes JUnit XML and a
 * Markdown summary when asked, prints a table (or JSON), deletes the children (an interrupted run too), and exits
 * 0 when every scenario passed, 1 when one failed, 2 when the run could not be made. The key is never printed.
 */
export function conformanceCommand(io: ConformanceIo): Command {
  return new Command('conformance')
    .description(
      "run the catalogue's scenarios against a client: each with a child test key, its command run with the key in " +
        "its environment, judged by the scenario's steps and the report card (exit code 1 when one failed)",
    )
    .requiredOption('--url <url>', 'the service, e.g. http://localhost:8080', baseUrl)
    .requiredOption('--key <key>', 'a test key (pet_test_…): the children are made under it')
    .requiredOption('--command <command>', 'the client under test, run through the shell for each scenario')
    .option('--scenario <id>', 'a scenario to run (again for each; default: every one)', collect, [])
    .addOption(new Option('--jobs <n>', 'scenarios run at once, 1 to 16').default(1).argParser(between(1, 16)))
    .addOption(
      new Option('--timeout <seconds>', 'how long the command has, per scenario')
        .default(120)
        .argParser(between(1, 3600)),
    )
    .option(
      '--receiver-url <url>',
      "where the client's webhook receiver listens (default: a free port of 127.0.0.1)",
      httpUrl,
    )
    .option('--junit <file>', 'write JUnit XML here')
    .option('--summary <file>', 'write a Markdown summary here (e.g. "$GITHUB_STEP_SUMMARY")')
    .option('--json', 'print the verdicts as JSON instead of a table')
    .action(async (options: Options) => {
      const own = io.interrupt ? undefined : processInterrupt();
      try {
        io.exit(await conformance(options, io, io.interrupt ?? own!.signal));
      } catch (error) {
        if (!(error instanceof CannotRun || error instanceof ServiceError)) throw error;
        io.err(`petstore conformance: ${error.message.split(options.key).join('pet_…')}`);
        io.exit(2);
      } finally {
        own?.dispose();
      }
    });
}

async function conformance(options: Options, io: ConformanceIo, signal: AbortSignal): Promise<number> {
  const startedAt = io.clock();
  const service = new Service(options.url, io.fetch ?? fetch, signal, io.clock);
  const catalogue = (await service.open()) as ScenarioCatalogue;
  const chosen = choose(catalogue, options.scenario);
  const probe = await service.call(options.key, 'GET', '/test-clock', { expect: () => true, uncounted: true });
  if (probe.status === 403) throw new CannotRun('--key is a live key: the scenarios need a test key (pet_test_…)');
  if (probe.status === 401) throw new CannotRun('--key is not a key of this service (unknown, malformed or revoked)');
  if (probe.status !== 200) throw new CannotRun(`the service answered GET /test-clock with ${probe.status}`);

  const context: RunContext = {
    service,
    parentKey: options.key,
    command: options.command,
    timeoutMs: options.timeout * 1000,
    receiverUrl: options.receiverUrl,
    env: io.env,
    children: new Set(),
    running: new Set(),
  };
  // Interrupted: the commands under way end now, so that the scenarios they hold end too.
  signal.addEventListener('abort', () => context.running.forEach((running) => running.kill()), { once: true });
  const verdicts = await pool(chosen, options.jobs, signal, (scenario) => runOne(context, scenario));
  if (signal.aborted) {
    const deleted = await cleanUp(context, options, io);
    throw new CannotRun(`interrupted; ${deleted} child key${deleted === 1 ? '' : 's'} deleted`);
  }
  const report: RunReport = {
    url: options.url,
    command: options.command,
    catalogueVersion: catalogue.version,
    verdicts,
    seconds: (io.clock() - startedAt) / 1000,
    startedAt: new Date(startedAt).toISOString(),
  };
  if (options.junit) await writeFile(options.junit, junitXml(report));
  if (options.summary) await writeFile(options.summary, markdownSummary(report), { flag: 'a' });
  io.out(options.json ? JSON.stringify(report, null, 2) : table(report));
  return verdicts.every((verdict) => verdict.passed) ? 0 : 1;
}

/** A scenario's run; a request of the runner's that failed fails the scenario, with why. */
async function runOne(context: RunContext, scenario: Scenario): Promise<Verdict> {
  try {
    return await runScenario(context, scenario);
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    const reason = `the runner could not prepare or judge it: ${error.message.split(context.parentKey).join('pet_…')}`;
    return { id: scenario.id, title: scenario.title, passed: false, reasons: [reason], tail: [], seconds: 0 };
  }
}

/** The scenarios asked for, in the catalogue's order; an unknown id cannot run. */
function choose(catalogue: ScenarioCatalogue, ids: string[]): Scenario[] {
  if (!Array.isArray(catalogue?.scenarios))
    throw new CannotRun('the service has no catalogue of scenarios (GET /scenarios)');
  const unknown = ids.filter((id) => !catalogue.scenarios.some((scenario) => scenario.id === id));
  if (unknown.length) throw new CannotRun(`no scenario ${unknown.join(', ')} in the catalogue (GET /scenarios)`);
  return ids.length ? catalogue.scenarios.filter((scenario) => ids.includes(scenario.id)) : catalogue.scenarios;
}

/** Runs `work` over `items`, at most `jobs` at once, in their order; stops taking new ones once `signal` aborts. */
async function pool<T, R>(items: T[], jobs: number, signal: AbortSignal, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal.aborted) {
      const index = next++;
      try {
        results[index] = await work(items[index]!);
      } catch (error) {
        if (!signal.aborted) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, items.length) }, worker));
  return results.filter((result) => result !== undefined);
}

/** An interrupted run: its commands ended, its children deleted (with requests that are not interrupted). */
async function cleanUp(context: RunContext, options: Options, io: ConformanceIo): Promise<number> {
  const service = new Service(options.url, io.fetch ?? fetch, AbortSignal.timeout(30_000), io.clock);
  service.version = context.service.version;
  let deleted = 0;
  for (const id of context.children) {
    const gone = await service
      .call(options.key, 'DELETE', `/test-keys/${id}`, { expect: (s) => s < 300 || s === 404 })
      .then(
        () => true,
        () => false,
      );
    if (gone) deleted++;
  }
  return deleted;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function between(low: number, high: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < low || n > high)
      throw new InvalidArgumentError(`must be a whole number from ${low} to ${high}`);
    return n;
  };
}

function httpUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // Said below.
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new InvalidArgumentError('must be an http:// or https:// URL');
  return value;
}
