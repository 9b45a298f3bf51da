import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../../src/webhooks/signature.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { BUILT, freePort } from '../helpers/process.js';
import { endpointAt, placeOrder } from '../helpers/webhooks.js';

/** `petstore webhooks listen`, in its own process, as a learner runs it. */

let t: TestApp;
let child: ChildProcess;
let output = '';
let url: string;
let secret: string;
let key: string;

beforeAll(async () => {
  t = await testApp({ clock: (await import('../helpers/clock.js')).fakeClock(new Date().toISOString()) });
  key = await t.newKey('business');
  const port = await freePort();
  url = `http://127.0.0.1:${port}/`;
  // The endpoint first: its secret is what the receiver checks with.
  secret = (await endpointAt(t, key, url)).secret;
  child = spawn(process.execPath, [
    BUILT.cli,
    'webhooks',
    'listen',
    '--port',
    String(port),
    '--secret',
    secret,
    '--fail',
    '1',
  ]);
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  while (!output.includes('listening on')) {
    if (child.exitCode !== null) throw new Error(output);
    await new Promise((r) => setTimeout(r, 50));
  }
});
afterAll(async () => {
  child?.kill();
  await t.close();
});

describe('petstore webhooks listen', () => {
  it('prints each verified delivery, answers 500 to the first --fail of them, then 200', async () => {
    const order = await placeOrder(t, key);
    await t.dispatcher.runDue();
    t.clock.advance(6_000);
    await t.dispatcher.runDue();
    const lines = output.split('\n').filter((line) => line.includes('order.placed'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`order ${order.id} (pet ${order.petId}) is placed  -> answered 500`);
    expect(lines[1]).not.toContain('500');
  });

  it('answers 401 to a delivery whose signature does not match, and says why', async () => {
    const body = '{"id":"evt_1aaaaaaaaaaaa","type":"webhook.test"}';
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': 'evt_1aaaaaaaaaaaa', 'webhook-timestamp': String(timestamp) };
    const other = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const refused = await fetch(url, {
      method: 'POST',
      body,
      headers: { ...headers, 'webhook-signature': sign(other, 'evt_1aaaaaaaaaaaa', timestamp, body) },
    });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('no signature matches');
    const old = await fetch(url, {
      method: 'POST',
      body,
      headers: {
        ...headers,
        'webhook-timestamp': String(timestamp - 3_600),
        'webhook-signature': sign(secret, 'evt_1aaaaaaaaaaaa', timestamp - 3_600, body),
      },
    });
    expect(old.status).toBe(401);
    const good = await fetch(url, {
      method: 'POST',
      body,
      headers: { ...headers, 'webhook-signature': sign(secret, 'evt_1aaaaaaaaaaaa', timestamp, body) },
    });
    expect(good.status).toBe(200);
    expect(output).toContain('refused  POST /: no signature matches the secret');
  });
});
