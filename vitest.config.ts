import { connect } from 'node:net';
import { defineConfig } from 'vitest/config';

/**
 * The API suites run twice, on SQLite and on PostgreSQL: one suite, parametrised by TEST_STORE.
 * Outside CI the PostgreSQL run is left out, with a printed reason, when no server answers;
 * in CI (CI=true) it always runs, so a missing server fails the build instead of hiding.
 */
const API_SUITES = [
  'test/pets/**/*.test.ts',
  'test/orders/**/*.test.ts',
  'test/events/**/*.test.ts',
  'test/webhooks/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/keys/**/*.test.ts',
  'test/openapi/**/*.test.ts',
  'test/ops/**/*.test.ts',
  'test/security/**/*.test.ts',
  'test/usage/**/*.test.ts',
  'test/versions/**/*.test.ts',
  'test/faults/**/*.api.test.ts',
];
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
  if (!postgres) console.warn(`\n[vitest] PostgreSQL suites skipped: nothing answers at ${new URL(TEST_DATABASE_URL).host} (set TEST_DATABASE_URL)\n`);
  const shared = { testTimeout: 20_000, hookTimeout: 30_000 };
  return {
    test: {
      projects: [
        { test: { ...shared, name: 'sqlite', include: API_SUITES, env: { TEST_STORE: 'sqlite' } } },
        ...(postgres ? [{ test: { ...shared, name: 'postgres', include: API_SUITES, env: { TEST_STORE: 'postgres', TEST_DATABASE_URL } } }] : []),
        { test: { ...shared, name: 'core', include: ['test/**/*.test.ts'], exclude: API_SUITES } },
      ],
    },
  };
});
