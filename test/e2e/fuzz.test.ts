/**
 * Property-based fuzzing of the running service (fast-check): over 10,000 generated requests, well
 * formed but hostile (through node:http) and malformed on the wire (raw sockets). Never a 5xx, never
 * a hang, and every error the app answers is problem+json with the rate-limit headers. What is
 * generated is in ../helpers/fuzz.ts; most requests carry one of a few enterprise keys, so that they
 * reach the handlers instead of the anonymous 429.
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { testDatabase } from '../helpers/database.js';
import { type HostileRequest, hostileRequest, rawRequest } from '../helpers/fuzz.js';
import { type Server, startServer, tempDir } from '../helpers/process.js';

// ---- The properties ----------------------------------------------------------------------------

const BATCH = 25;
const HOSTILE_BATCHES = 320; // 8,000 requests
const RAW_BATCHES = 100; // 2,500 requests
const HANG_MS = 10_000;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let server: Server;
let port: number;
let keys: string[];
const agent = new Agent({ keepAlive: true, maxSockets: BATCH });
/** How many answers came from the HTTP parser's refusals rather than the app (a problem without an instance). */
let parserAnswers = 0;
/** fast-check would print the whole failing batch (megabytes): the failure and the seed are enough. */
function runs<T>(numRuns: number): fc.Parameters<T> {
  return {
    numRuns,
    reporter: (run) => {
      if (run.failed)
        throw new Error(
          `seed ${run.seed}, path "${run.counterexamplePath}": ${String(run.errorInstance).slice(0, 3_000)}`,
        );
    },
  };
}

beforeAll(async () => {
  const file = join(tempDir(), 'petstore.db');
  const store = await testDatabase({ kind: 'sqlite', sqliteFile: file });
  const repository = new KeysRepository(store.db, systemClock);
  keys = [];
  for (let i = 0; i < 4; i++)
    keys.push((await repository.create({ plan: 'enterprise', perMinute: 1_000_000, perDay: 1_000_000 })).key);
  const revoked = await repository.create({ plan: 'pro' });
  await repository.revoke(revoked.record.id);
  keys.push(revoked.key);
  await store.db.destroy();
  server = await startServer({ DATABASE_URL: file, DEMO_KEYS: 'false', TRUST_PROXY: '', LOG_LEVEL: 'error' });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  agent.destroy();
  await server.stop();
});

function send(r: HostileRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, agent, method: r.method, path: r.path, headers: r.headers, timeout: HANG_MS },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`hang: ${r.method} ${r.path.slice(0, 100)}`)));
    req.on('error', reject);
    req.end(r.body);
  });
}

/** Writes the bytes, half-closes, and reads every response until the server closes the connection. */
function sendRaw(bytes: Buffer): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`hang: ${JSON.stringify(bytes.toString('latin1').slice(0, 200))}`));
    }, HANG_MS);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponses(Buffer.concat(chunks).toString('latin1')));
    });
    // A request that asks for `Connection: close` is left to the service to close; any other is sent
    // with the client's half of the connection closed. (A client that half-closes before an answer that
    // waits on the store gets none: Node's HTTP server aborts such a request. docs/design.md, "Connections".)
    if (/\r\nConnection: close\r\n/i.test(bytes.toString('latin1'))) socket.write(bytes);
    else socket.end(bytes);
  });
}

function parseResponses(text: string): Answer[] {
  const answers: Answer[] = [];
  while (text.startsWith('HTTP/1.1 ')) {
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines)
      headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    const length = Number(headers['content-length'] ?? 0);
    const status = Number(statusLine!.split(' ')[1]);
    // A `100 Continue` (Node's own, to `Expect: 100-continue`) is interim: the answer follows it.
    if (status !== 100) answers.push({ status, headers, body: text.slice(end + 4, end + 4 + length) });
    text = text.slice(end + 4 + length);
  }
  return answers;
}

/** The contract for every answer of the app; `method` HEAD carries no body. */
function expectContract(answer: Answer, method = 'GET'): void {
  const { status, headers, body } = answer;
  expect(status, body).toBeLessThan(500);
  for (const name of [
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'ratelimit-policy',
    'ratelimit',
  ])
    expect(headers[name], name).toBeDefined();
  if (status === 429) expect(headers['retry-after']).toMatch(/^[1-9]\d*$/);
  if (status < 400) return;
  expect(headers['content-type']).toMatch(/^application\/problem\+json/);
  if (method === 'HEAD') return;
  const problem = JSON.parse(body) as Record<string, unknown>;
  expect(problem).toMatchObject({
    status,
    type: expect.stringMatching(/\/problems\/[a-z-]+$/),
    title: expect.any(String),
    detail: expect.any(String),
    instance: expect.any(String),
  });
}

function judge(answer: Answer, method?: string): void {
  expect(answer.headers['x-request-id']).toBeDefined();
  expectContract(answer, method);
  if (answer.status >= 400 && method !== 'HEAD' && (JSON.parse(answer.body) as { instance: string }).instance === '') {
    // Refused by Node's HTTP parser before the app saw a request line, or a CONNECT (405), which
    // names a host rather than a path.
    expect([400, 405, 408, 431]).toContain(answer.status);
    parserAnswers++;
  }
}

describe('fuzzing the running service', () => {
  it(`${HOSTILE_BATCHES * BATCH} well-formed but hostile requests: never a 5xx or a hang; errors are problems with the rate-limit headers`, async () => {
    let reachedHandlers = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          hostileRequest(() => keys),
          { minLength: BATCH, maxLength: BATCH },
        ),
        async (batch) => {
          const answers = await Promise.all(batch.map(send));
          for (const [i, answer] of answers.entries()) judge(answer, batch[i]!.method);
          reachedHandlers += answers.filter((a) => a.status !== 429 && a.status !== 401).length;
        },
      ),
      runs(HOSTILE_BATCHES),
    );
    // Most must get past identification and the limiter, or the handlers were hardly fuzzed.
    expect(reachedHandlers).toBeGreaterThan((HOSTILE_BATCHES * BATCH) / 2);
  }, 120_000);

  it(`${RAW_BATCHES * BATCH} malformed requests on raw sockets (NUL bytes, bad framing, huge headers, unicode): never a 5xx or a hang`, async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          rawRequest(() => keys),
          { minLength: BATCH, maxLength: BATCH },
        ),
        async (batch) => {
          const answers = await Promise.all(batch.map(sendRaw));
          answers.forEach((forRequest, i) => {
            for (const answer of forRequest) judge(answer, batch[i]!.toString('latin1').split(' ')[0]);
            // Node closes a CONNECT or an Upgrade it has no handler for, and resets a connection whose
            // request it refused while the rest was still arriving: no answer, but no hang either.
            if (forRequest.length > 0) answered++;
            else expect(batch[i]!.toString('latin1')).toMatch(/^CONNECT |Upgrade|X-Huge|^\S*\0|^[^\r\n]{9000,}/m);
          });
        },
      ),
      runs(RAW_BATCHES),
    );
    expect(answered).toBeGreaterThan((RAW_BATCHES * BATCH) / 2);
    // The parser's own refusals were among them, and met the same contract.
    expect(parserAnswers).toBeGreaterThan(0);
  }, 120_000);

  it('is still healthy and logged no failure', async () => {
    const response = await fetch(`${server.url}/pets/1`, { headers: { 'x-api-key': keys[0]! } });
    expect(response.status).toBe(200);
    expect(server.output()).not.toMatch(/"level":(50|60)/);
  });
});
