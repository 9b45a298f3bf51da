import { connect } from 'node:net';
import { defineConfig } from 'vitest/config';

/**
 * The suite in layers (docs/tests.md), each a project:
 * - `unit`: the pure core (`*.unit.test.ts`): no store, no network, no process;
 * - `sqlite` and `postgres`: the API suites, once on each store (TEST_STORE), apps built in this process;
 * - `integration`: the rest that runs in this process: the limiter on Redis, the client, the store's parts;
 * - `e2e-timed` and `e2e`: the built service and CLI in processes of their own, several instances,
 *   Redis Cluster, nginx, Chromium, the package as a user installs it.
 * Outside CI the PostgreSQL run is left out, with a printed reason, when no server answers; in CI
 * (CI=true) it always runs, so a missing server fails the build instead of hiding.
 *
 * Test files share their worker's modules (`isolate: false`): a file must leave no global changed
 * (fake timers restored, spies made where they are used). `e2e-timed` runs first, one file at a time;
 * then every other layer, two files at a time.
 */
const STORE_SUITES = [
  'test/pets/**/*.test.ts',
  'test/orders/**/*.test.ts',
  'test/events/**/*.test.ts',
  'test/webhooks/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/keys/**/*.test.ts',
  // Not what does not depend on the store (the document's linters and its generated types, the log's
  // batching): those run once, in `integration`.
  'test/openapi/**/!(lint|problem-types).test.ts',
  'test/ops/**/!(log-batch).test.ts',
  'test/security/**/*.test.ts',
  'test/usage/**/*.test.ts',
  'test/test-mode/**/!(*.unit).test.ts',
  'test/report-card/**/!(*.unit).test.ts',
  'test/scenarios/**/!(*.unit).test.ts',
  'test/versions/**/*.test.ts',
  'test/faults/**/*.api.test.ts',
  'test/oauth/**/*.test.ts',
  'test/request-log/**/*.test.ts',
];
const UNIT = ['test/**/*.unit.test.ts'];
const E2E = ['test/e2e/**/*.test.ts', 'test/docs/**/*.test.ts'];
/**
 * End-to-end suites that hold the service to real time or exact counts under load (timeouts, bursts,
 * several instances deciding together, a Redis node lost): they run first and one at a time, with
 * nothing else on the machine, which a busy neighbour (Chromium drawing /docs) would make late.
 */
const E2E_TIMED = [
  'abuse',
  'bursts',
  'concurrency',
  'instances',
  'redis-cluster',
  'limiter-redis-cluster',
  'redis-outage',
  'postgres-outage',
  'fulfilment',
  'fulfilment-instances',
  'parallel-instances',
  // A change (a revocation, an exchange recorded) reaching the other instance within a second.
  'tokens-instances',
  'request-log-instances',
  // An EventSource's resumes wait the stream's 3 s retry, ten and more of them: another file's load would skew them.
  'event-stream-instances',
  // Six processes migrating one new SQLite file at once, ten times: beside Chromium it ran past its minute.
  'store-start',
  'shutdown',
  // The careless example's repeats at once must reach the service at once: a busy machine spreads them.
  'examples',
].map((name) => `test/e2e/${name}.test.ts`);
/**
 * Each project that stores anything on PostgreSQL copies its
 * stores from one migrated template (test/setup/postgres.ts).
 */
const POSTGRES = ['test/setup/postgres.ts'];
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 5432) });
    socket.setTimeout(1_000);
    const answer = (reached: boolean) => {
      socket.destroy();
      resolve(reached);
    };
    socket.once('connect', () => answer(true));
    socket.once('error', () => answer(false));
    socket.once('timeout', () => answer(false));
  });
}

export default defineConfig(async () => {
  const postgres = process.env.CI === 'true' || (await reachable(TEST_DATABASE_URL));
  if (!postgres)
    console.warn(
      `\n[vitest] PostgreSQL suites skipped: nothing answers at ${new URL(TEST_DATABASE_URL).host} (set TEST_DATABASE_URL)\n`,
    );
  // Two files at a time, sharing their worker's modules; after the timed suites, which run alone.
  const shared = {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    isolate: false,
    maxWorkers: 2,
    sequence: { groupOrder: 1 },
  };
  const stores = (name: 'sqlite' | 'postgres') => ({
    test: {
      ...shared,
      name,
      include: STORE_SUITES,
      exclude: UNIT,
      env: { TEST_STORE: name, TEST_DATABASE_URL },
      globalSetup: POSTGRES,
    },
  });
  const built = ['test/setup/build.ts', ...POSTGRES];
  return {
    test: {
      // `npm run test:coverage`: the lines of src/ that the suites run in their own processes.
      coverage: { provider: 'v8' as const, include: ['src/**'], reporter: ['text-summary', 'json-summary'] },
      projects: [
        {
          test: {
            ...shared,
            name: 'e2e-timed',
            include: E2E_TIMED,
            globalSetup: built,
            maxWorkers: 1,
            sequence: { groupOrder: 0 },
          },
        },
        { test: { ...shared, name: 'unit', include: UNIT } },
        stores('sqlite'),
        ...(postgres ? [stores('postgres')] : []),
        {
          test: {
            ...shared,
            name: 'integration',
            include: ['test/**/*.test.ts'],
            exclude: [...STORE_SUITES, ...UNIT, ...E2E],
            globalSetup: POSTGRES,
          },
        },
        { test: { ...shared, name: 'e2e', include: E2E, exclude: E2E_TIMED, globalSetup: built } },
      ],
    },
  };
});
