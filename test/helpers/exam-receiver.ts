import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from '../../src/webhooks/signature.js';

/** Receivers for the webhook receiver exam (test/report-card/exam.test.ts): right, or wrong in chosen ways. */

const open: Server[] = [];

/** Closes every receiver started since the last call. */
export async function closeReceivers(): Promise<void> {
  for (const server of open.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Keeps a server of a test's own to be closed with the receivers. */
export function closedLater(server: Server): void {
  open.push(server);
}

/** How a test receiver goes wrong; none: it is written to the specification. */
export interface Flaws {
  acceptsUnsigned?: boolean;
  acceptsStale?: boolean;
  acceptsFuture?: boolean;
  /** Verifies the signature over `JSON.stringify(JSON.parse(body))`, not the bytes it received. */
  reserialises?: boolean;
  firstSignatureOnly?: boolean;
  anySignature?: boolean;
  /** Answers a `webhook-id` it has already handled with this (right: a 2xx). */
  duplicateStatus?: number;
  /**
   * The nth request it gets (from 0) is answered the other way round:
   * 400 for what it should accept, 200 for what it should refuse.
   */
  invertAt?: number;
  /** The nth request it gets is never answered. */
  hangAt?: number;
  /** No request it gets is ever answered. */
  hangs?: boolean;
  /** Every request answered with this status, whatever it holds. */
  always?: number;
  /** Waits this long before each answer. */
  delayMs?: number;
}

/**
 * A receiver on 127.0.0.1 with the given flaws, checking with `secrets` (given once its endpoints have them)
 * against `clock` (the service's); it keeps what it receives, and answers 204 what it accepts, 401 what it refuses.
 * Closed by `closeReceivers`.
 */
export async function receiverWith(clock: () => number, flaws: Flaws = {}) {
  const state = {
    secrets: [] as string[],
    requests: 0,
    inFlight: 0,
    mostInFlight: 0,
    received: [] as { headers: IncomingHttpHeaders; body: string }[],
  };
  const seen = new Set<string>();
  const judge = (headers: Record<string, string | string[] | undefined>, body: string): number => {
    const [id, timestamp, signature] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) =>
      String(headers[name] ?? ''),
    );
    if (!id || !timestamp) return 401;
    if (signature) {
      const age = clock() / 1000 - Number(timestamp);
      if ((age > 300 && !flaws.acceptsStale) || (age < -300 && !flaws.acceptsFuture)) return 401;
      const signed = flaws.reserialises ? JSON.stringify(JSON.parse(body)) : body;
      const checked = flaws.firstSignatureOnly ? signature.split(' ')[0]! : signature;
      if (!flaws.anySignature && !verify(state.secrets, id!, Number(timestamp), signed, checked)) return 401;
    } else if (!flaws.acceptsUnsigned) return 401;
    if (seen.has(id!)) return flaws.duplicateStatus ?? 200;
    seen.add(id!);
    return 204;
  };
  const server = createServer((request, response) => {
    const n = state.requests++;
    state.mostInFlight = Math.max(state.mostInFlight, ++state.inFlight);
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      state.received.push({ headers: request.headers, body });
      if (n === flaws.hangAt || flaws.hangs) return;
      let status = flaws.always ?? judge(request.headers, body);
      if (n === flaws.invertAt) status = status < 300 ? 400 : 200;
      setTimeout(() => {
        state.inFlight--;
        response.writeHead(status).end();
      }, flaws.delayMs ?? 0);
    });
  });
  open.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` });
}
