/**
 * The client's webhook operations against the real server, and
 * `verifyWebhook` against the specification's reference library.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PetstoreClient, verifyWebhook, WebhookVerificationError } from '../../client/index.js';
import { sign } from '../../src/webhooks/signature.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { clientOptions } from './harness.js';

let t: TestApp;
let receiver: Receiver;
let client: PetstoreClient;

beforeAll(async () => {
  t = await testApp();
  receiver = await startReceiver();
  client = new PetstoreClient(clientOptions(t.app, t.clock, await t.newKey('business')));
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const other = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const now = 1_795_000_000;
const body = JSON.stringify({
  id: 'evt_1abcdefabcdef',
  type: 'webhook.test',
  timestamp: '2026-11-25T12:00:00.000Z',
  livemode: true,
  data: { endpointId: 'we_x' },
});
const headersOf = (signature: string, timestamp = now) => ({
  'webhook-id': 'evt_1abcdefabcdef',
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature,
});

/** What the reference library says: the payload, or that it refuses. */
function reference(secrets: string[], headers: Record<string, string>, text = body, at = now): 'refused' | unknown {
  const real = Date.now;
  Date.now = () => at * 1000;
  try {
    for (const s of secrets) {
      try {
        return new Webhook(s).verify(text, headers);
      } catch {
        // the next secret
      }
    }
    return 'refused';
  } finally {
    Date.now = real;
  }
}

async function ours(
  secrets: string[],
  headers: Record<string, string>,
  text = body,
  at = now,
): Promise<'refused' | unknown> {
  try {
    return await verifyWebhook(text, headers, secrets, { now: at });
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return 'refused';
  }
}

describe('verifyWebhook', () => {
  it('accepts what the reference library accepts and refuses what it refuses', async () => {
    const good = sign(secret, 'evt_1abcdefabcdef', now, body);
    const cases: Array<[string[], Record<string, string>, string?, number?]> = [
      [[secret], headersOf(good)],
      [[other, secret], headersOf(`${sign(other, 'evt_1abcdefabcdef', now, body)} ${good}`)],
      [[secret], headersOf(`v2,abc ${good}`)],
      [[secret], headersOf(good), body.replace('"livemode":true', '"livemode":false')],
      [[other], headersOf(good)],
      [[secret], headersOf(good), body, now + 301],
      [[secret], headersOf(good), body, now - 301],
      [[secret], headersOf(good), body, now + 299],
      [[secret], headersOf(good.replace('v1,', 'v2,'))],
      [[secret], { 'webhook-id': 'evt_1abcdefabcdef', 'webhook-signature': good }],
      [[secret], headersOf(sign(secret, 'evt_other', now, body))],
    ];
    for (const [secrets, headers, text = body, at = now] of cases)
      expect(await ours(secrets, headers, text, at), JSON.stringify([headers, at])).toEqual(
        reference(secrets, headers, text, at),
      );
    expect(await ours([secret], headersOf(good))).toEqual(JSON.parse(body));
  });

  it('reads a Fetch Headers object too', async () => {
    const headers = new Headers(headersOf(sign(secret, 'evt_1abcdefabcdef', now, body)));
    await expect(verifyWebhook(body, headers, secret, { now })).resolves.toMatchObject({ type: 'webhook.test' });
  });
});

describe('the client', () => {
  it('makes an endpoint, sends it a test event, reads its log, redelivers, rotates, disables and deletes it', async () => {
    const endpoint = await client.createWebhookEndpoint({ url: receiver.url, events: ['order.placed'] });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const delivery = await client.testWebhookEndpoint(endpoint.id);
    await t.dispatcher.runDue();
    const received = receiver.received.at(-1)!;
    const event = await verifyWebhook(received.body, received.headers as Record<string, string>, endpoint.secret, {
      now: Math.floor(t.clock() / 1000),
    });
    expect(event).toMatchObject({ id: delivery.eventId, type: 'webhook.test', data: { endpointId: endpoint.id } });
    expect((await client.listWebhookDeliveries(endpoint.id)).data[0]).toMatchObject({
      id: delivery.id,
      state: 'succeeded',
    });
    expect(await client.retryWebhookDelivery(endpoint.id, delivery.id)).toMatchObject({ state: 'pending' });
    const rotated = await client.rotateWebhookSecret(endpoint.id);
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(await client.updateWebhookEndpoint(endpoint.id, { enabled: false })).toMatchObject({
      enabled: false,
      disabledReason: 'by-request',
    });
    expect((await client.listWebhookEndpoints()).data.map((e) => e.id)).toEqual([endpoint.id]);
    await client.deleteWebhookEndpoint(endpoint.id);
    expect((await client.listWebhookEndpoints()).data).toEqual([]);
  });
});
