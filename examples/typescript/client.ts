/**
 * A client under test for `petstore conformance` (docs/testing-clients.md#running-a-clients-conformance-suite): it
 * reads `PETSTORE_SCENARIO` and does what that scenario's `clientMust` says (src/scenarios/catalogue.ts), through the
 * typed client (`PetstoreClient`), which keeps the API's rules: pacing, `Retry-After`, backoff, `Idempotency-Key`,
 * `ETag`s, `410`s, webhook signatures.
 *
 *   npx tsx src/cli.ts conformance --url http://127.0.0.1:8080 --key "$TEST_KEY" --jobs 4 \
 *     --command "node --import tsx examples/typescript/client.ts"
 *
 * Its waits pass in the key's own time: `now` is the key's clock, and `sleep(ms)` moves that clock forward by `ms`
 * (`POST /test-clock/advance` `{to}`, to the millisecond) instead of waiting, which the report card counts as time
 * waited. `random` is seeded from the scenario's id, so that a run replays. The token scenarios' client signs in with
 * the child key's client credentials (`PETSTORE_CLIENT_ID`, `PETSTORE_CLIENT_SECRET`): one access token for all its
 * callers, renewed once. Exit 0: the task was done; 1: it failed; 2: it could not start (an unknown scenario, a
 * variable missing).
 */
import { randomUUID } from 'node:crypto';
import {
  ClockCannotGoBackError,
  PetstoreClient,
  PetstoreError,
  RateLimitedError,
  type ResponseEvent,
  SunsetError,
  type TestClock,
} from '../../client/index.js';
import { receiveUntilStopped } from './receiver.js';

/** What a task has to work with. */
interface Context {
  petstore: PetstoreClient;
  env: NodeJS.ProcessEnv;
  /** A client of the same key and time that signs in with its client credentials: its requests carry a token. */
  withToken: () => PetstoreClient;
}

/** One scenario's work; resolves to a line saying what was done. */
type Task = (context: Context) => Promise<string>;

/** A variable the runner sets, or exit 2. */
function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value) return value;
  console.error(`${name} is not set: run this under \`petstore conformance\``);
  process.exit(2);
}

/** A seeded generator in [0, 1) (mulberry32), seeded with the FNV-1a hash of `seed`: the same jitter every run. */
function seededRandom(seed: string): () => number {
  let state = 0x811c9dc5;
  for (const char of seed) state = Math.imul(state ^ char.charCodeAt(0), 0x01000193);
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * The key's own time, for the client's `now` and `sleep`: its clock's offset from the real time is learnt from
 * `GET /test-clock` and from every move's answer. A sleep moves the clock to now + ms; a `409` `clock-cannot-go-back`
 * means the real time already passed that instant (the wait is over), and the clock is read again.
 */
function keyTime(clock: PetstoreClient['testClock']) {
  let offsetMs = 0;
  let frozenAt: number | undefined;
  const learn = (view: TestClock) => {
    offsetMs = Math.round(view.offsetSeconds * 1000);
    frozenAt = view.frozen ? Date.parse(view.now) : undefined;
  };
  const now = () => frozenAt ?? Date.now() + offsetMs;
  const sleep = async (ms: number): Promise<void> => {
    if (!(ms > 0)) return;
    const to = new Date(Math.ceil(now() + ms)).toISOString();
    try {
      learn(await clock.advance({ to }));
      console.log(`  clock moved ${ms.toFixed(1)} ms, to ${to}`);
    } catch (error) {
      if (!(error instanceof ClockCannotGoBackError)) throw error;
      learn(await clock.get());
    }
  };
  return { now, sleep, read: async () => learn(await clock.get()) };
}

/** Every answer the client got, one line each: the runner shows the last lines of a scenario that failed. */
function logResponse({ operation, status, attempt, requestId }: ResponseEvent): void {
  console.log(`  ${operation} → ${status} (attempt ${attempt}, request ${requestId ?? '-'})`);
  if (operation === 'streamEvents' && status === 200) streamOpened?.();
}

/** Told when a stream opens (its answer's status is heard here first): what follows it then comes on it. */
let streamOpened: (() => void) | undefined;

/**
 * A call repeated while it ends in a `429`: the client retries a call at most 5 times, and a run of `429`s longer
 * than that is waited out call after call (its gate keeps each `Retry-After` across calls, so nothing goes early).
 * Not a refusal the client made without sending (a wait longer than `maxWaitMs`), nor a ban.
 */
async function untilAnswered<T>(call: () => Promise<T>, calls = 10): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof RateLimitedError) || error.problem === undefined || n === calls) throw error;
      console.log(`  still rate limited after call ${n}: calling again once Retry-After has passed`);
    }
  }
}

/** Reads these pets in turn (`GET /pets/{petId}`); the client paces, retries and revalidates. */
const readPets =
  (...petIds: number[]): Task =>
  async ({ petstore }) => {
    const names: string[] = [];
    for (const petId of petIds) names.push(`${petId} ${(await untilAnswered(() => petstore.getPet(petId))).name}`);
    return `read pet ${names.join(', pet ')}`;
  };

/** Pet 1 read four times: the second and later reads carry its `ETag` as `If-None-Match`. */
const revalidate: Task = async ({ petstore }) => {
  for (let n = 0; n < 4; n++) await untilAnswered(() => petstore.getPet(1));
  return `read pet 1 four times, ${petstore.savedByCache} of them answered 304`;
};

/** One order for pet 1, its one `Idempotency-Key` on every try, so that a retry never places a second one. */
const placeOrder: Task = async ({ petstore }) => {
  const idempotencyKey = randomUUID();
  const order = await untilAnswered(() => petstore.placeOrder({ petId: 1, quantity: 1 }, { idempotencyKey }));
  return `placed order ${order.id} for pet ${order.petId} (${order.status})`;
};

/** One page of the listing (`GET /pets`). */
const listPets: Task = async ({ petstore }) => {
  const page = await untilAnswered(() => petstore.listPets());
  return `listed ${page.data.length} pets`;
};

/** Every pet, 5 a page, each `nextCursor` passed back as it came, with the same filters. */
const pageToEnd: Task = async ({ petstore }) => {
  let cursor: string | undefined;
  let [pets, pages] = [0, 0];
  do {
    const page = await untilAnswered(() => petstore.listPets({ limit: 5, cursor }));
    [pets, pages] = [pets + page.data.length, pages + 1];
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return `listed ${pets} pets in ${pages} pages`;
};

/** Pet 1 by `GET /pets/{petId}`; once that answers `410`, never again: found in `GET /pets` instead. */
const readPastSunset: Task = async ({ petstore }) => {
  try {
    return `read pet 1 ${(await untilAnswered(() => petstore.getPet(1))).name}`;
  } catch (error) {
    if (!(error instanceof SunsetError)) throw error;
    console.log(`  GET /pets/{petId} is gone (${error.status}): looking in GET /pets`);
  }
  let cursor: string | undefined;
  do {
    const page = await untilAnswered(() => petstore.listPets({ cursor }));
    const pet = page.data.find((one) => one.id === 1);
    if (pet) return `found pet 1 ${pet.name} in GET /pets`;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  throw new Error('pet 1 is in no page of GET /pets');
};

/** Pets 1 to 8 read by eight parallel callers of one client: one access token for them all, asked for once. */
const readInParallel: Task = async ({ withToken }) => {
  const petstore = withToken();
  const ids = [1, 2, 3, 4, 5, 6, 7, 8];
  const pets = await Promise.all(ids.map((petId) => untilAnswered(() => petstore.getPet(petId))));
  return `read pets ${pets.map((pet) => pet.id).join(', ')} from eight parallel callers, with one token`;
};

/**
 * Pet 1 read with a token; the key's clock moved an hour on, as a test of expiry moves it: by the test, so the client's
 * own clock does not learn of it (one that did would renew before sending, and never meet the expiry). The next read
 * carries the token that expired and is refused (`401` `invalid_token`): the client renews it once and reads again.
 */
const readPastExpiry: Task = async ({ withToken }) => {
  const petstore = withToken();
  await untilAnswered(() => petstore.getPet(1));
  const { offsetSeconds } = await petstore.testClock.advance({ seconds: 3600 });
  console.log(`  the test moved the key's clock an hour on (offset ${offsetSeconds} s)`);
  const pet = await untilAnswered(() => petstore.getPet(1));
  return `read pet 1 ${pet.name} again, an hour on in the key's time`;
};

/**
 * The key's `order.placed` events followed as a stream while two orders of pet 1 are placed, the second once the
 * first's event has come. The stream's ends are the client's to resume: after their `retry`, from the last event.
 */
const followOrders: Task = async ({ petstore }) => {
  const opened = new Promise<void>((resolve) => (streamOpened = resolve));
  const events = petstore.events.stream({ types: ['order.placed'] })[Symbol.asyncIterator]();
  // The first `next()` opens the stream: the first order is placed once it is open.
  let next = events.next();
  await opened;
  const first = (await untilAnswered(() => petstore.placeOrder({ petId: 1, quantity: 1 }))).id;
  let second: number | undefined;
  const seen = new Set<number>();
  for (;;) {
    const { value, done } = await next;
    if (done) throw new Error('the stream ended for good');
    const order = (value.data as { id: number }).id;
    if (seen.has(order)) throw new Error(`order ${order}'s order.placed came twice`);
    seen.add(order);
    if (order === first && second === undefined)
      second = (await untilAnswered(() => petstore.placeOrder({ petId: 1, quantity: 1 }))).id;
    if (second !== undefined && seen.has(second)) break;
    next = events.next();
  }
  await events.return?.();
  return `followed orders ${first} and ${second} on the stream, each placed event once`;
};

/**
 * A webhook receiver on `PETSTORE_RECEIVER_PORT` (on the receiver URL's host when that is a loopback address, else on
 * every interface: `localhost`, a tunnel's or a container's name may stand for any of this machine's addresses),
 * verifying with `PETSTORE_WEBHOOK_SECRET` (./receiver.ts); prints `PETSTORE_READY` once listening and ends on
 * `SIGTERM`.
 */
const receiveWebhooks: Task = ({ env }) => {
  const secret = required(env, 'PETSTORE_WEBHOOK_SECRET');
  const port = Number(required(env, 'PETSTORE_RECEIVER_PORT'));
  const hostname = new URL(env.PETSTORE_RECEIVER_URL ?? 'http://127.0.0.1/').hostname.replace(/^\[|\]$/g, '');
  const host = ['127.0.0.1', '::1'].includes(hostname) ? hostname : undefined;
  return receiveUntilStopped({ secret, port, host });
};

/** Each scenario of the catalogue (`GET /scenarios`) and the task its `clientMust` asks for. */
const TASKS: Record<string, Task> = {
  'retry-after-503': readPets(1),
  'backs-off-500': readPets(1),
  'reset-order': placeOrder,
  'unavailable-order': placeOrder,
  'error-order': placeOrder,
  'rate-limited-burst': readPets(1),
  'rate-limited-order': placeOrder,
  'pace-minute': readPets(1, 2, 3),
  'pace-day': readPets(1, 2),
  revalidate,
  'page-to-end': pageToEnd,
  'version-pin': readPets(1, 2),
  'sunset-gone': readPastSunset,
  'webhook-receiver': receiveWebhooks,
  'flaky-listing': listPets,
  'token-reuse': readInParallel,
  'token-expiry': readPastExpiry,
  'stream-resume': followOrders,
};

/** What went wrong, with the request to quote. */
function describe(error: unknown): string {
  if (error instanceof PetstoreError)
    return `${error.name} (${error.status}): ${error.message}${error.requestId ? ` [request ${error.requestId}]` : ''}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function main(env: NodeJS.ProcessEnv): Promise<number> {
  const scenario = required(env, 'PETSTORE_SCENARIO');
  const task = TASKS[scenario];
  if (!task) {
    console.error(`unknown scenario ${scenario}; this client knows ${Object.keys(TASKS).join(', ')}`);
    return 2;
  }
  const [apiKey, baseUrl] = [required(env, 'PETSTORE_API_KEY'), required(env, 'PETSTORE_URL')];
  // The clock's own calls go through a client of their own: the main client's gate is busy sleeping when it calls.
  const time = keyTime(new PetstoreClient({ apiKey, baseUrl, random: seededRandom(`${scenario} clock`) }).testClock);
  await time.read();
  const options = {
    baseUrl,
    now: time.now,
    sleep: time.sleep,
    random: seededRandom(scenario),
    onResponse: logResponse,
  };
  const petstore = new PetstoreClient({ apiKey, ...options });
  const withToken = () =>
    new PetstoreClient({
      clientId: required(env, 'PETSTORE_CLIENT_ID'),
      clientSecret: required(env, 'PETSTORE_CLIENT_SECRET'),
      ...options,
    });
  console.log(`${scenario}: ${await task({ petstore, env, withToken })}`);
  return 0;
}

main(process.env).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`failed: ${describe(error)}`);
    process.exit(1);
  },
);
