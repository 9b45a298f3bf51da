import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.js';
import { NEWEST_VERSION, OLDEST_VERSION } from '../../src/versions/versions.js';
import { TEST_STORE } from '../helpers/database.js';
import { cli, tempDir } from '../helpers/process.js';

// The CLI on the store of a running app, through a connection of its own, as an operator uses it
// beside the service: a SQLite file, or the suite's PostgreSQL database.
let t: TestApp;
let env: Record<string, string>;
/** How many times the app heard of each key's change. */
const notices = new Map<string, number>();
beforeAll(async () => {
  t = await testApp(TEST_STORE === 'sqlite' ? { sqliteFile: join(tempDir(), 'petstore.db') } : {});
  env = { DATABASE_URL: t.databaseUrl };
  t.changes.subscribe(
    ({ table, id }) => void (table === 'api_keys' && id && notices.set(id, (notices.get(id) ?? 0) + 1)),
  );
});
afterAll(async () => t.close());

const get = (key: string) => t.app.inject({ method: 'GET', url: '/pets', headers: { 'x-api-key': key } });

async function petstore(...args: string[]) {
  const heardBefore = new Map(notices);
  const run = await cli(args, env);
  const json = () => JSON.parse(run.stdout);
  // On SQLite the app sees the CLI's commit at its next request; on PostgreSQL it hears of it by the
  // store's notice a few milliseconds later, as another instance would (docs/scaling.md): what
  // the test does next waits for that.
  const changed =
    run.code === 0
      ? (args.find((arg) => arg.startsWith('key_')) ?? (args.includes('--json') ? json().id : undefined))
      : undefined;
  if (TEST_STORE === 'postgres' && typeof changed === 'string') {
    await vi.waitFor(() => expect(notices.get(changed) ?? 0).toBeGreaterThan(heardBefore.get(changed) ?? 0), {
      timeout: 5_000,
    });
  }
  return { ...run, json };
}

describe('petstore keys', () => {
  it('create --json prints one object with id, key and plan; the key works at once', async () => {
    const run = await petstore('keys', 'create', '--plan', 'pro', '--name', 'ci', '--json');
    expect(run.code).toBe(0);
    const created = run.json();
    expect(created).toMatchObject({ plan: 'pro', name: 'ci', ban: null, revokedAt: null });
    expect(created.id).toMatch(/^key_/);
    expect(created.key).toMatch(/^pet_[A-Za-z0-9_-]{32}$/);
    const response = await get(created.key);
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-ratelimit-limit']).toBe('300');
  });

  it('list shows keys by id and prefix, never the key', async () => {
    const created = (await petstore('keys', 'create', '--plan', 'free', '--json')).json();
    const run = await petstore('keys', 'list', '--json');
    expect(run.code).toBe(0);
    const listed = run.json().find((k: { id: string }) => k.id === created.id);
    expect(listed).toMatchObject({ plan: 'free', prefix: `${created.key.slice(0, 8)}…` });
    expect(run.stdout).not.toContain(created.key);
    const human = await petstore('keys', 'list');
    expect(human.stdout).toContain(created.id);
    expect(human.stdout).not.toContain(created.key);
  });

  it('revoke through the CLI takes effect on the running app at its next request', async () => {
    const created = (await petstore('keys', 'create', '--plan', 'free', '--json')).json();
    expect((await get(created.key)).statusCode).toBe(200);
    const run = await petstore('keys', 'revoke', created.id, '--json');
    expect(run.code).toBe(0);
    expect(run.json().revokedAt).toEqual(expect.any(String));
    expect((await get(created.key)).statusCode).toBe(401);
  });

  it('set-plan applies from the next request, with enterprise numbers', async () => {
    const created = (await petstore('keys', 'create', '--plan', 'free', '--json')).json();
    expect((await get(created.key)).headers['x-ratelimit-limit']).toBe('60');
    const run = await petstore(
      'keys',
      'set-plan',
      created.id,
      'enterprise',
      '--per-minute',
      '5000',
      '--per-day',
      '900000',
      '--json',
    );
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ plan: 'enterprise', perMinute: 5000, perDay: 900000 });
    const response = await get(created.key);
    expect(response.headers['ratelimit-policy']).toBe('"minute";q=5000;w=60, "day";q=900000;w=86400');
  });

  it('create --api-version pins a key; list shows the pin; set-version applies from the next request', async () => {
    const created = (
      await petstore('keys', 'create', '--plan', 'free', '--api-version', OLDEST_VERSION, '--json')
    ).json();
    expect(created.apiVersion).toBe(OLDEST_VERSION);
    expect((await get(created.key)).headers['petstore-version']).toBe(OLDEST_VERSION);
    expect((await petstore('keys', 'list')).stdout).toMatch(new RegExp(`${created.id} .* version ${OLDEST_VERSION}`));
    const run = await petstore('keys', 'set-version', created.id, NEWEST_VERSION, '--json');
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ apiVersion: NEWEST_VERSION });
    expect((await get(created.key)).headers['petstore-version']).toBe(NEWEST_VERSION);
    expect((await petstore('keys', 'create', '--plan', 'free', '--json')).json().apiVersion).toBe(NEWEST_VERSION);
  });

  it('unban succeeds on an existing key and reports it', async () => {
    const created = (await petstore('keys', 'create', '--plan', 'free', '--json')).json();
    const run = await petstore('keys', 'unban', created.id, '--json');
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ id: created.id });
  });

  it('create --test makes a pet_test_… key with a standing fault profile; set-faults sets it again or removes it', async () => {
    const run = await petstore(
      'keys',
      'create',
      '--plan',
      'free',
      '--test',
      '--fault-rate',
      '1',
      '--faults',
      '503',
      '--latency',
      '0-5',
      '--seed',
      '7',
      '--json',
    );
    expect(run.code).toBe(0);
    const created = run.json();
    expect(created.key).toMatch(/^pet_test_[A-Za-z0-9_-]{32}$/);
    expect(created).toMatchObject({
      test: true,
      faults: { rate: 1, faults: ['503'], latencyMs: { min: 0, max: 5 }, seed: 7 },
    });
    expect((await get(created.key)).statusCode).toBe(503);
    const human = await petstore('keys', 'set-faults', created.id, '--fault-rate', '0.25', '--latency', '120');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/TEST \(faults: 25% of 503, 500, 429, reset; 120 ms; seed \d+\)/);
    expect((await petstore('keys', 'set-faults', created.id, '--none', '--json')).json().faults).toBeNull();
    expect((await get(created.key)).statusCode).toBe(200);
  });

  it.each([
    [['keys', 'create', '--plan', 'free', '--fault-rate', '0.5'], 1, /for test keys only/],
    [['keys', 'create', '--plan', 'free', '--test', '--fault-rate', '1.5'], 2, /expected a number from 0 to 1/],
    [
      ['keys', 'create', '--plan', 'free', '--test', '--fault-rate', '0.1', '--faults', '503,404'],
      1,
      /faults are one or more of 503, 500, 429, reset/,
    ],
    [['keys', 'create', '--plan', 'free', '--test', '--latency', '50-400'], 1, /need --fault-rate/],
    [['keys', 'set-faults', 'key_nope', '--fault-rate', '0.5'], 1, /no key key_nope/],
    [['keys', 'create', '--plan', 'gold'], 2, /expected one of free, pro, business, enterprise/],
    [['keys', 'create'], 2, /--plan/],
    [['keys', 'create', '--plan', 'enterprise'], 1, /needs its own per-minute and per-day/],
    [['keys', 'create', '--plan', 'free', '--per-minute', '5', '--per-day', '9'], 1, /fixed limits/],
    [['keys', 'revoke', 'key_nope'], 1, /no key key_nope/],
    [['keys', 'set-plan', 'key_nope', 'pro'], 1, /no key key_nope/],
    [['keys', 'set-version', 'key_nope', NEWEST_VERSION], 1, /no key key_nope/],
    [['keys', 'create', '--plan', 'free', '--api-version', 'latest'], 1, /unknown version "latest": the versions are /],
  ])('%j fails with a clear message (exit %i)', async (args, code, message) => {
    const run = await petstore(...args);
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
  });

  it('refuses limits past 2,147,483,647 and control characters in a name with one clear line, on every store', async () => {
    for (const args of [
      ['--plan', 'enterprise', '--per-minute', '3000000000', '--per-day', '3000000000'],
      ['--plan', 'pro', '--name', 'tab\there'],
    ]) {
      const run = await petstore('keys', 'create', ...args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toMatch(
        /^petstore: (per-minute must be a whole number from 1 to 2147483647|a name may not contain control characters)\n$/,
      );
    }
  });

  it('refuses a DATABASE_URL it cannot use, naming the variable', async () => {
    const run = await cli(['keys', 'list'], { DATABASE_URL: 'mysql://x' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/DATABASE_URL/);
  });
});
