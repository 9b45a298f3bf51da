import { createServer, type Server } from 'node:http';
import type { Clock } from '../clock.js';
import { verify } from './signature.js';

/** How far a delivery's timestamp may be from this clock, as the reference libraries allow. */
const TOLERANCE_S = 5 * 60;
const MAX_BODY_BYTES = 1024 * 1024;

export interface ListenOptions {
  host: string;
  port: number;
  /** The endpoint's secrets (`whsec_…`): during a rotation, both. */
  secrets: string[];
  /** Answer this many verified deliveries with 500 first, to watch them retried. */
  fail: number;
  out: (line: string) => void;
  clock: Clock;
}

/**
 * `petstore webhooks listen`: a receiver for learners. It checks each delivery as a receiver written to
 * the Standard Webhooks specification must (the signature, by one of the secrets; a recent timestamp),
 * prints the ones that pass in a line each, answers them `200` (or `500`, the first `fail` of them), and
 * answers `401` to the rest, saying why.
 */
export function listen(options: ListenOptions): Promise<Server> {
  const now = options.clock;
  let failing = options.fail;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const [id, timestamp, signature] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) =>
        String(request.headers[name] ?? ''),
      );
      const refused = refusal(id!, timestamp!, signature!, body);
      const at = new Date(now()).toISOString().slice(11, 19);
      if (refused) {
        options.out(`${at}  refused  ${request.method} ${request.url}: ${refused}`);
        return void response.writeHead(401, { 'content-type': 'text/plain' }).end(`${refused}\n`);
      }
      const status = failing > 0 ? (failing--, 500) : 200;
      options.out(`${at}  ${describe(id!, body)}${status === 500 ? '  -> answered 500: it will be retried' : ''}`);
      response.writeHead(status).end();
    });
  });
  const refusal = (id: string, timestamp: string, signature: string, body: string): string | undefined => {
    if (!id || !timestamp || !signature) return 'missing webhook-id, webhook-timestamp or webhook-signature';
    if (!/^\d+$/.test(timestamp) || Math.abs(now() / 1000 - Number(timestamp)) > TOLERANCE_S)
      return 'webhook-timestamp is not within 5 minutes of this clock';
    return verify(options.secrets, id, Number(timestamp), body, signature)
      ? undefined
      : 'no signature matches the secret';
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve(server));
  });
}

/** A delivery in a line: its type and id, and what its data says. */
function describe(id: string, body: string): string {
  try {
    const event = JSON.parse(body) as {
      type?: string;
      livemode?: boolean;
      data?: { id?: number; status?: string; petId?: number; endpointId?: string };
    };
    const data = event.data ?? {};
    const what = data.endpointId
      ? `test of ${data.endpointId}`
      : `order ${data.id} (pet ${data.petId}) is ${data.status}`;
    return `${event.type ?? '?'}  ${id}  ${what}${event.livemode === false ? '  [test key]' : ''}`;
  } catch {
    return `${id}  (a body that is not JSON)`;
  }
}
