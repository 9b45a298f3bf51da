import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { eventsOf } from '../helpers/events.js';
import { firstPetWith, ordersAs } from '../helpers/orders.js';
import { BUILT, ROOT } from '../helpers/process.js';

/**
 * `petstore events tail`, the built CLI in its own process (test/events/tail-cli.test.ts holds its cases, in this
 * process): its lines as they come, the stream dropped by the service resumed after a real 3 s `retry`, and Ctrl-C
 * (`SIGINT`) ending it with exit code 0.
 */

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ overSocket: true });
});
afterAll(async () => t.close());

it('prints events as they come, resumes after the service drops the stream, and exits 0 on SIGINT', async () => {
  const key = await t.newKey({ plan: 'enterprise', perMinute: 10_000, perDay: 100_000, test: true });
  const pet = await firstPetWith(t, key, 'available');
  const order = async () => {
    const placed = json<{ id: number }>(await ordersAs(t, key).post({ petId: pet, quantity: 1 }));
    await t.request({ method: 'POST', url: `/store/orders/${placed.id}/advance`, headers: { 'x-api-key': key } });
  };
  const steps = [
    { match: 'GET /events/stream', answer: 'drop' },
    { match: 'GET /events/stream', answer: 'pass' },
  ];
  await t.request({ method: 'PUT', url: '/test-scenario', headers: { 'x-api-key': key }, payload: { steps } });
  await order();
  const [placed] = (await eventsOf(t, key)).reverse();
  const child = spawn(
    process.execPath,
    [BUILT.cli, 'events', 'tail', '--url', t.url!, '--key', key, '--after', placed!.id],
    {
      cwd: ROOT,
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = async (count: number) => {
    for (const deadline = Date.now() + 10_000; stdout.split('\n').length <= count;) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`stdout: ${stdout}\nstderr: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  try {
    // The approval after --after, then the stream ends; written while it waits, the next order's two events come on
    // the resumed stream.
    await lines(1);
    await order();
    await lines(3);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  const events = (await eventsOf(t, key)).reverse().slice(1);
  expect(stdout).toBe(
    events.map((event) => `${event.timestamp} ${event.type} ${event.id} order ${event.data.id}\n`).join(''),
  );
  expect(stderr).toBe(
    `petstore events tail: the stream ended; resuming after ${events[0]!.id} once its retry has passed\n`,
  );
});
