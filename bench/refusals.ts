/**
 * The refusals of a mode's paths phase (http.ts): the 429 of a banned key and that of a key over its
 * limit, each as a row, by turns against admissions on the service that refuses, and (with the peers)
 * against its floor.
 */
import { type ByTurns, byTurns, type LoadSettings, oneAtATime, type Requests } from './load.js';
import {
  type Answer,
  answerTo,
  CONFIG_ROUNDS,
  CONFIG_TURN_SECONDS,
  floorRow,
  get,
  type ModeRun,
  PATHS,
  type RowRunner,
} from './mode-run.js';
import { type Proc, startService } from './service.js';
import { Agent, get as httpGet } from 'node:http';
import type { BenchKeys } from './setup.js';

/** The 429 run needs keys that stay over their limit without being banned; see `measureRefusals`. */
export const LIMITED_KEYS = 100;

/**
 * The banned row, and its turns against `GET /pets/{petId}`, which it returns; then its floor. On a
 * service of its own on the same store that reads a banned caller's connection at once
 * (`BANNED_READ_PAUSE_MS=0`): what is measured is the refusal itself, where by default a banned caller
 * gets ten answers a second per connection (src/http/pipelining.ts).
 */
export async function measureBanned(run: ModeRun): Promise<ByTurns> {
  const { keys } = run;
  const service = await startService({ ...run.env, BANNED_READ_PAUSE_MS: '0' });
  try {
    const refusal = await ban(service.url, keys.banned);
    await run.row(service, PATHS.banned, 429, get('/pets/1', [keys.banned]));
    // Within the ban's minute: the row's 11 s and these 24.
    const turns = await refusalByTurns(
      run.mode,
      PATHS.banned,
      service,
      run.pets,
      get('/pets/1', [keys.banned]),
      run.settings,
    );
    // The floor of a refusal: that 429, headers and problem body, from bare node:http.
    if (run.has('peers')) await floorRow(run, PATHS.bannedFloor, refusal, get('/pets/1', [keys.banned]));
    return turns;
  } finally {
    await service.stop();
  }
}

/**
 * The over-limit row, on a service of its own that replaces `run.service` (`measureRefusals`), and
 * its turns against `GET /pets/{petId}`, which it returns; then its floor.
 */
export async function measureOverLimit(run: ModeRun): Promise<ByTurns> {
  await run.service.stop();
  const overLimit = get('/pets/1', run.keys.limited);
  let refused: Answer;
  [run.service, refused] = await measureRefusals(run.env, run.keys, run.row);
  const turns = await refusalByTurns(run.mode, PATHS.overLimit, run.service, run.pets, overLimit, run.settings);
  // Last: the floor replays its one answer, so the keys' minute may end meanwhile.
  if (run.has('peers')) await floorRow(run, PATHS.overLimitFloor, refused, overLimit);
  return turns;
}

/**
 * The over-limit row. With the default ban rules a key over its limit is banned after its 10th 429,
 * so the 429 path cannot be held for a whole run. This run uses a second service on the same store
 * that bans only after a billion 429s in one second; each key's log of 429s then holds about a
 * second's worth (req/s ÷ LIMITED_KEYS: some tens of entries, where the default rules keep at most
 * 10). Returns that service, still running, and one of its 429s (for the row's floor).
 */
async function measureRefusals(env: Record<string, string>, keys: BenchKeys, row: RowRunner): Promise<[Proc, Answer]> {
  const service = await startService({ ...env, BAN_AFTER_REJECTIONS: '1000000000', BAN_WITHIN_SECONDS: '1' });
  const { limited } = keys;
  // Exhaust each free key's minute (60 requests), a chain per key.
  await Promise.all(
    limited.map(async (key) => {
      for (let i = 0; i < 60; i++)
        await fetch(`${service.url}/pets/1`, { headers: { 'x-api-key': key } }).then((r) => r.arrayBuffer());
    }),
  );
  const refused = await answerTo(service.url, get('/pets/1', limited));
  await row(service, PATHS.overLimit, 429, get('/pets/1', limited));
  return [service, refused];
}

/** Refusals (`refused`) against admissions (`admitted`, met before) on one service, by turns. */
async function refusalByTurns(
  mode: string,
  path: string,
  service: Proc,
  admitted: Requests,
  refused: Requests,
  settings: LoadSettings,
): Promise<ByTurns> {
  await oneAtATime(service.url, admitted, admitted.length);
  const turns = await byTurns(
    service,
    service,
    { a: admitted, b: refused },
    settings.connections,
    CONFIG_ROUNDS,
    CONFIG_TURN_SECONDS,
  );
  // Refusals throughout: a ban or a minute that ended during the turns would measure something else.
  if (
    Object.keys(turns.statuses.b).some((status) => status !== '429') ||
    Object.keys(turns.statuses.a).some((status) => status !== '200')
  )
    throw new Error(`${path} by turns: answered ${JSON.stringify(turns.statuses)}`);
  const { a, b } = turns.cpuUsPerRequest;
  process.stderr.write(
    `  ${mode}: ${path} ÷ ${PATHS.pets} by turns: median ${turns.median} (${turns.ratios.join(', ')}), CPU ${b} against ${a} µs\n`,
  );
  return turns;
}

/**
 * Bans the key (60 admitted, then 429s until the ban); the answer of a request during the ban. Ten 429s sent
 * before the previous one's wait passed (the first waited for nothing, docs/rate-limits.md#bans) ban a free key
 * for 60 s: long enough for the banned row and its turns (about 35 s at BENCH_DURATION=10). All on one
 * connection: a 429 answered while another connection of the pool was open could be forgiven as in flight
 * (docs/testing-clients.md), and count toward no ban.
 */
async function ban(url: string, key: string): Promise<Answer> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let text = '';
  try {
    for (let i = 0; i < 72; i++) text = await bodyOf(`${url}/pets/1`, key, agent);
  } finally {
    agent.destroy();
  }
  if (!text.includes('key-banned')) throw new Error(`the key was not banned: ${text}`);
  const banned = await fetch(`${url}/pets/1`, { headers: { 'x-api-key': key } });
  return { status: banned.status, headers: banned.headers, body: await banned.text() };
}

/** The body of a `GET` with the key, through `agent`. */
function bodyOf(url: string, key: string, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent, headers: { 'x-api-key': key } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(body));
      response.on('error', reject);
    }).on('error', reject);
  });
}
