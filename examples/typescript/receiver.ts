/**
 * The webhook receiver of the TypeScript conformance client (./client.ts, for `webhook-receiver`): each delivery
 * verified with `verifyWebhook` as Standard Webhooks says, `204` for a good one (a duplicate too), `400` for a bad one.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '../../client/index.js';

/** What the runner's `webhook-receiver` waits for before it examines the receiver. */
const READY_LINE = 'PETSTORE_READY';

/** A receiver's secret, the `webhook-id`s it handled, and how many deliveries it verified (duplicates too). */
interface Receiver {
  secret: string;
  seen: Set<string>;
  verified: { count: number };
}

/** A request's body, as received: a signature is over these bytes. */
async function rawBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One delivery: `204` once verified as Standard Webhooks says (a duplicate `webhook-id` too, acknowledged but not
 * handled twice), `400` when it is not (wrong or missing signature, stale or future timestamp, changed body).
 */
async function answerDelivery(
  { secret, seen, verified }: Receiver,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (request.method !== 'POST') return void response.writeHead(405, { allow: 'POST' }).end();
  const body = await rawBody(request);
  try {
    const event = await verifyWebhook(body, request.headers, secret);
    const id = String(request.headers['webhook-id']);
    console.log(`  ${seen.has(id) ? 'duplicate, acknowledged' : 'received'} ${event.type} ${id}`);
    seen.add(id);
    verified.count++;
    response.writeHead(204).end();
  } catch (error) {
    // A verified body that is not JSON is as bad a delivery as a forged one; anything else is this receiver's fault.
    const bad = error instanceof WebhookVerificationError || error instanceof SyntaxError;
    console.log(`  ${bad ? 'refused' : 'failed on'} a delivery: ${(error as Error).message}`);
    response.writeHead(bad ? 400 : 500, { 'content-type': 'text/plain' }).end((error as Error).message);
  }
}

/**
 * A receiver on `port` (of `host`, or of every interface), verifying with `secret`; prints `PETSTORE_READY` once
 * listening, and resolves to a line saying what it did once `SIGTERM` stopped it.
 */
export function receiveUntilStopped(where: { secret: string; port: number; host?: string }): Promise<string> {
  const { secret, port, host } = where;
  const receiver: Receiver = { secret, seen: new Set(), verified: { count: 0 } };
  const server = createServer((request, response) => {
    // A delivery whose body never arrived whole (its connection cut): nothing to answer.
    answerDelivery(receiver, request, response).catch(() => response.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host }, () => console.log(READY_LINE));
    process.once('SIGTERM', () => {
      const { seen, verified } = receiver;
      server.close(() =>
        resolve(`receiver stopped: ${verified.count} deliveries verified, ${seen.size} events handled`),
      );
      server.closeAllConnections();
    });
  });
}
