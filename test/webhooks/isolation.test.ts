import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Delivery, endpointAt, placeOrder, webhooksAs } from '../helpers/webhooks.js';

/**
 * One customer's receivers cannot hold back another's (docs/webhooks.md): a key's dead endpoints use only
 * that key's share of the sender, and an attempt never waits for a connection another holds. At
 * default settings (a 15 s timeout), another key's healthy endpoint is attempted in the first pass
 * after its delivery falls due (passes run every half second), while the first key's 8 hang.
 */

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0)) await thing.close();
});

/** A receiver on `host` that never answers under /dead and answers 200 under /ok; it counts what it holds. */
async function receiverOn(host: string): Promise<{ url: string; hanging: number; ok: number }> {
  const held: ServerResponse[] = [];
  const seen = { url: '', hanging: 0, ok: 0 };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.url?.startsWith('/dead')) {
        seen.hanging++;
        held.push(response);
      } else {
        seen.ok++;
        response.writeHead(200).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  seen.url = `http://${host}:${(server.address() as AddressInfo).port}`;
  open.push({
    close: () =>
      new Promise<void>(
        (resolve) => (held.forEach((r) => r.destroy()), server.closeAllConnections(), server.close(() => resolve())),
      ),
  });
  return seen;
}

const deliveriesOf = async (t: TestApp, key: string, endpointId: string) =>
  json<{ data: Delivery[] }>(await webhooksAs(t, key).get(`/webhook-endpoints/${endpointId}/deliveries`)).data;

describe.each([
  ['on the same host and port', ['127.0.0.1', '127.0.0.1']],
  ['on another host', ['127.0.0.1', '127.0.0.2']],
] as const)('a key whose 8 receivers hang, and another key’s healthy receiver %s', (_, [deadHost, healthyHost]) => {
  it('the healthy one is attempted in the first pass after its delivery falls due, and succeeds while the 8 still hang', async () => {
    const t = await testApp();
    open.unshift(t);
    const dead = await receiverOn(deadHost);
    const healthy = healthyHost === deadHost ? dead : await receiverOn(healthyHost);
    const a = await t.newKey('business');
    for (let i = 0; i < 8; i++) await endpointAt(t, a, `${dead.url}/dead/${i}`);
    for (let i = 0; i < 5; i++) await placeOrder(t, a); // 40 deliveries due, 5 for each dead endpoint
    void (await t.dispatcher.pass());
    await until(() => dead.hanging === 8);

    const b = await t.newKey('business');
    const endpoint = await endpointAt(t, b, `${healthy.url}/ok`);
    await placeOrder(t, b);
    const started = await t.dispatcher.pass();
    expect(started).toHaveLength(1);
    await started[0];
    expect(await deliveriesOf(t, b, endpoint.id)).toMatchObject([{ state: 'succeeded', attempts: [{ status: 200 }] }]);
    // The first key used its share, no more, and its attempts are all still waiting for an answer.
    expect(dead.hanging).toBe(8);
    expect(healthy.ok).toBe(1);
  });
});

/** Waits, a turn of the event loop at a time, until `done` holds (at most a few seconds). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
}
