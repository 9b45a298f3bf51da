import { createServer } from 'node:net';
import type { ReportCard } from '../report-card/schemas.js';
import type { Scenario, ScenarioSetup, Script } from '../scenarios/schemas.js';
import { endedCleanly, endingInWords, type Ending, READY_LINE, runCommand, type Running } from './command.js';
import type { Service } from './service.js';

const DAY_MS = 86_400_000;

/** What one scenario's run came to. */
export interface Verdict {
  id: string;
  title: string;
  passed: boolean;
  /** Why it failed, one line each; empty when it passed. */
  reasons: string[];
  /** The command's last lines of output. */
  tail: string[];
  seconds: number;
}

/** What every scenario of a run shares. */
export interface RunContext {
  service: Service;
  /** The test key the children are made under (never printed). */
  parentKey: string;
  command: string;
  timeoutMs: number;
  /** Where the client's webhook receiver listens; default: a free port of 127.0.0.1. */
  receiverUrl?: string;
  /** The environment the command starts from. */
  env: NodeJS.ProcessEnv;
  /** The children alive and the commands under way, for an interrupted run to clean up. */
  children: Set<string>;
  running: Set<Running>;
}

/**
 * One scenario (docs/testing-clients.md#running-a-clients-conformance-suite): a child test key, its setup, the
 * scenario armed, the command run with the child's key, and the verdict read from the child's script and report
 * card; the child is deleted afterwards, whatever happened.
 */
export async function runScenario(context: RunContext, scenario: Scenario): Promise<Verdict> {
  const started = performance.now();
  const { service, parentKey } = context;
  const verdict = (reasons: string[], tail: string[] = []): Verdict => ({
    id: scenario.id,
    title: scenario.title,
    passed: reasons.length === 0,
    reasons,
    tail,
    seconds: (performance.now() - started) / 1000,
  });
  const { perMinute, perDay } = scenario.setup ?? {};
  const limits = { ...(perMinute === undefined ? {} : { perMinute }), ...(perDay === undefined ? {} : { perDay }) };
  const made = await service.call(parentKey, 'POST', '/test-keys', { body: limits });
  const child = made.body as { id: string; key: string };
  context.children.add(child.id);
  try {
    const setup = scenario.setup ?? {};
    const receiver = await prepare(context, child.key, setup);
    // A setup that moved the clock leaves its situation open for a while in the key's time, which runs on.
    const timed = setup.advanceSeconds !== undefined || setup.beforeMidnightSeconds !== undefined;
    const setupEnded = timed ? await keyNow(service, child.key) : undefined;
    await service.call(child.key, 'PUT', '/test-scenario', { body: { scenario: scenario.id }, uncounted: true });
    const { ending, reasons } = await run(context, scenario, child, receiver);
    reasons.push(...(await judged(service, child.key, scenario, setupEnded)));
    return verdict(reasons, ending.tail);
  } finally {
    await service.call(parentKey, 'DELETE', `/test-keys/${child.id}`, { expect: (s) => s < 300 || s === 404 });
    context.children.delete(child.id);
  }
}

/** A receiver's place, and the secret its deliveries are signed with. */
interface Receiver {
  url: string;
  port: string;
  secret: string;
  endpointId: string;
}

/** The setup, in its order (scenarios/schemas.ts `ScenarioSetup`; the limits were the child's from its making). */
async function prepare(context: RunContext, key: string, setup: ScenarioSetup): Promise<Receiver | undefined> {
  const { service } = context;
  const now = () => keyNow(service, key);
  const moveTo = (to: number) =>
    service.call(key, 'POST', '/test-clock/advance', { body: { to: new Date(to).toISOString() }, uncounted: true });
  if (setup.beforeMidnightSeconds !== undefined) {
    const at = await now();
    const midnight = Math.floor(at / DAY_MS) * DAY_MS + DAY_MS;
    let to = midnight - setup.beforeMidnightSeconds * 1000;
    if (to <= at) to += DAY_MS;
    await moveTo(to);
  }
  for (let n = 1; n <= (setup.requests ?? 0); n++) await service.call(key, 'GET', `/pets?limit=${n}`);
  if (setup.advanceSeconds !== undefined)
    await service.call(key, 'POST', '/test-clock/advance', {
      body: { seconds: setup.advanceSeconds },
      uncounted: true,
    });
  if (setup.advanceTo !== undefined && (await now()) < Date.parse(setup.advanceTo))
    await moveTo(Date.parse(setup.advanceTo));
  if (!setup.webhookEndpoint) return undefined;
  const url = context.receiverUrl ?? `http://127.0.0.1:${await freePort()}/`;
  const parsed = new URL(url);
  const endpoint = (await service.call(key, 'POST', '/webhook-endpoints', { body: { url } })).body as {
    id: string;
    secret: string;
  };
  const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  return { url, port, secret: endpoint.secret, endpointId: endpoint.id };
}

/** The command run for the scenario; with a receiver, examined once ready, then stopped. */
async function run(
  context: RunContext,
  scenario: Scenario,
  child: { id: string; key: string },
  receiver: Receiver | undefined,
): Promise<{ ending: Ending; reasons: string[] }> {
  const { key } = child;
  const env: NodeJS.ProcessEnv = {
    ...context.env,
    PETSTORE_URL: context.service.url,
    PETSTORE_API_KEY: key,
    // The child as an OAuth client (docs/tokens.md): the token scenarios' client gets its tokens with these.
    PETSTORE_CLIENT_ID: child.id,
    PETSTORE_CLIENT_SECRET: key,
    PETSTORE_SCENARIO: scenario.id,
    ...(receiver
      ? {
          PETSTORE_RECEIVER_URL: receiver.url,
          PETSTORE_RECEIVER_PORT: receiver.port,
          PETSTORE_WEBHOOK_SECRET: receiver.secret,
        }
      : {}),
  };
  const running = runCommand(context.command, env, context.timeoutMs);
  context.running.add(running);
  try {
    const ready = receiver ? await running.ready : true;
    if (receiver && ready) {
      await context.service.call(key, 'POST', `/webhook-endpoints/${receiver.endpointId}/exam`);
      running.stop();
    }
    const ending = await running.ended;
    const words = endingInWords(ending, context.timeoutMs);
    if (!ready) return { ending, reasons: [`${words} before it printed ${READY_LINE}`] };
    return { ending, reasons: endedCleanly(ending) ? [] : [words] };
  } finally {
    context.running.delete(running);
  }
}

/** The key's now, as its clock says. */
async function keyNow(service: Service, key: string): Promise<number> {
  return Date.parse(((await service.call(key, 'GET', '/test-clock', { uncounted: true })).body as { now: string }).now);
}

/** What the child's script and card say: the steps left unused, the checks not passed, the checks failed. */
async function judged(
  service: Service,
  key: string,
  scenario: Scenario,
  setupEnded: number | undefined,
): Promise<string[]> {
  const reasons: string[] = [];
  const script = (await service.call(key, 'GET', '/test-scenario', { uncounted: true })).body as Script;
  if (!script.done) {
    const usedOf = (index: number) => script.used.filter((use) => use.step === index).length;
    script.steps.forEach((step, index) => {
      const times = step.times ?? 1;
      const used = usedOf(index);
      if (used < times)
        reasons.push(
          `step ${index} (${step.match ?? 'any request'} → ${step.answer}) was used ${used} of ${times} time${times === 1 ? '' : 's'}`,
        );
    });
  }
  const card = (await service.call(key, 'GET', '/report-card', { uncounted: true })).body as ReportCard;
  const first = script.used[0];
  const late =
    setupEnded !== undefined && first
      ? ` (the client's first request came ${((Date.parse(first.at) - setupEnded) / 1000).toFixed(1)} s after the ` +
        "setup, in the key's time: the scenario's page says how long its situation lasts)"
      : '';
  for (const check of card.checks) {
    const judges = (scenario.judgedBy as string[]).includes(check.id);
    if (check.status === 'failed') {
      const latest = check.failures[0];
      reasons.push(
        `${check.id} failed: ${latest ? `${latest.detail} (request ${latest.requestId})` : `${check.failed} time(s)`}`,
      );
    } else if (judges && check.status !== 'passed')
      reasons.push(`${check.id} is untested: its situation never arose${late}`);
  }
  return reasons;
}

/** A port of 127.0.0.1 that no one listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
