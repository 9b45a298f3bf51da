/**
 * Property-based fuzzing of the running service (fast-check): over 10,000 generated requests, well
 * formed but hostile (through node:http) and malformed on the wire (raw sockets). Never a 5xx, never
 * a hang, and every error the app answers is problem+json with the rate-limit headers. Most requests
 * carry one of a few enterprise keys, so that they reach the handlers instead of the anonymous 429.
 */
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { KeysRepository } from '../../src/keys/repository.js';
import { testDatabase } from '../helpers/database.js';
import { type Server, startServer, tempDir } from '../helpers/process.js';

// ---- What is generated -------------------------------------------------------------------------

interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const oneOf = <T>(...values: T[]) => fc.constantFrom(...values);
/** What node:http lets a client put in a header value: latin1 without control characters. */
const latin1 = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0xff })
    .filter((c) => c !== 0x7f)
    .map((c) => String.fromCharCode(c)),
  maxLength: 80,
});
const anyText = fc.string({ unit: 'binary', maxLength: 80 }); // any code point, NUL and lone surrogates included
const id = fc.oneof(
  fc.nat().map(String),
  oneOf('0', '-1', '0x10', '1e3', '%201', '9223372036854775807', '9223372036854775808', '1.5', '', 'null', '%00'),
  anyText.map(encodeURIComponent),
);
const segment = fc.oneof(
  oneOf('pets', 'store', 'orders', 'openapi.json', 'docs', 'problems', 'rate-limited', 'admin', '..', '%2e%2e', '%00', '%ZZ', '%', '~'),
  anyText.map(encodeURIComponent),
);
const path = fc.oneof(
  oneOf(
    '/pets',
    '/pets/1',
    '/store/orders',
    '/store/orders/1',
    '/openapi.json',
    '/openapi.yaml',
    '/docs/deprecations',
    '/problems/not-found',
    '/',
    '//pets',
    '/pets/',
  ),
  fc.tuple(oneOf('/pets/', '/store/orders/'), id).map(([p, i]) => p + i),
  fc.array(segment, { maxLength: 6 }).map((s) => `/${s.join('/')}`),
  fc.integer({ min: 1_000, max: 12_000 }).map((n) => `/pets/${'9'.repeat(n)}`),
);
const query = fc.oneof(
  fc.constant(''),
  fc
    .array(
      fc.tuple(
        oneOf('limit', 'cursor', 'status', 'x', '__proto__', 'limit[]', ''),
        fc.oneof(oneOf('1', '0', '100', '101', '-1', 'abc', 'available', 'sold', '', '%00', '%ZZ'), anyText.map(encodeURIComponent)),
      ),
      { maxLength: 4 },
    )
    .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
);
const body = fc.oneof(
  fc
    .record(
      {
        petId: fc.oneof(oneOf(1, 2, 3, 4, 5), fc.integer(), fc.double()),
        quantity: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.double(), fc.string()),
        shipDate: fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          anyText,
        ),
      },
      { requiredKeys: ['petId'] },
    )
    .map((o) => JSON.stringify(o)),
  fc.json(),
  anyText,
  oneOf(
    '['.repeat(5_000),
    '{"petId":1e400,"quantity":1}',
    '{"__proto__":{"polluted":1},"petId":1}',
    '{"constructor":{"prototype":{"x":1}},"petId":1}',
    '\u0000',
    '{"petId":1,"petId":2}',
    '',
  ),
  fc.integer({ min: 15_000, max: 70_000 }).map((n) => JSON.stringify({ petId: 1, quantity: 1, pad: 'x'.repeat(n) })),
);

/** Half anything at all, half aimed at the operations with a valid key, so that handlers are reached. */
function hostileRequest(keys: () => string[]): fc.Arbitrary<HostileRequest> {
  const key = fc.nat().map((i) => keys()[i % 4]!);
  const order = fc
    .record(
      {
        petId: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 16 }) }, fc.integer()),
        quantity: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: -1, max: 9 }) }, fc.double()),
        shipDate: fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
      },
      { requiredKeys: ['petId'] },
    )
    .map((o) => JSON.stringify(o));
  const aimed = fc
    .tuple(
      fc.oneof(
        fc.tuple(
          oneOf('GET'),
          fc.tuple(oneOf('/pets', '/store/orders'), query).map(([p, q]) => p + q),
        ),
        fc.tuple(
          oneOf('GET', 'HEAD', 'DELETE'),
          fc.tuple(oneOf('/pets/', '/store/orders/'), fc.oneof(fc.integer({ min: 1, max: 60 }).map(String), id)).map(([p, i]) => p + i),
        ),
        fc.tuple(oneOf('POST'), oneOf('/store/orders')),
      ),
      key,
      fc.option(fc.oneof(order, body), { nil: undefined }),
      fc.option(fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,12}$/), latin1), { nil: undefined }),
    )
    .map(([[method, path], apiKey, payload, idempotencyKey]) => ({
      method,
      path,
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) },
      body: method === 'POST' ? payload : undefined,
    }));
  return fc.oneof(anything(keys), aimed).map((r) => {
    const headers = Object.fromEntries(Object.entries(r.headers).filter(([, v]) => v !== undefined)) as Record<string, string>;
    // node:http sends a GET's body without any length, which is a malformed request: say it.
    if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
    return { ...r, headers };
  });
}

function anything(keys: () => string[]) {
  const apiKey = fc.oneof(
    { weight: 8, arbitrary: fc.nat().map((i) => keys()[i % 4]!) },
    oneOf(
      () => keys()[4]!,
      () => `pet_${'A'.repeat(32)}`,
    ).map((f) => f()),
    latin1,
  );
  const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
  const headers = fc.record({
    'x-api-key': optional(apiKey),
    'content-type': optional(
      fc.oneof(
        oneOf(
          'application/json',
          'application/json; charset=utf-16',
          'text/plain',
          'multipart/form-data; boundary=x',
          'application/problem+json',
          'APPLICATION/JSON',
          '*/*',
        ),
        latin1,
      ),
    ),
    'idempotency-key': optional(latin1),
    'x-request-id': optional(latin1),
    'x-forwarded-for': optional(fc.ipV4()),
    accept: optional(oneOf('application/json', 'text/html', '*/*', 'application/xml')),
    'access-control-request-method': optional(oneOf('POST', 'DELETE', 'TRACE')),
  });
  return fc.record({
    method: oneOf('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
    path: fc.tuple(path, query).map(([p, q]) => p + q),
    headers,
    body: optional(body),
  });
}

/** Bytes no well-behaved client would send: half garbage throughout, half well framed around odd bytes. */
function rawRequest(keys: () => string[]): fc.Arbitrary<Buffer> {
  return fc.oneof(garbage(keys), framed(keys));
}

/** A framed request (length, Connection: close) whose target, headers and body hold what a client library would refuse to send. */
function framed(keys: () => string[]): fc.Arbitrary<Buffer> {
  const target = fc.oneof(
    fc
      .tuple(oneOf('/pets/', '/store/orders', '/pets?status=', '/store/orders?cursor='), anyText)
      .map(([p, t]) => Buffer.concat([Buffer.from(p), Buffer.from(t)])),
    path.map((p) => Buffer.from(p)),
  );
  const header = fc.oneof(
    oneOf('Content-Type: application/json', 'Content-Type: text/plain', 'X-Request-Id: a\tb', 'Accept: */*', 'Idempotency-Key: x', 'X-Forwarded-For: 1.2.3.4'),
    fc.tuple(anyText, anyText).map(([k, v]) => `X-${encodeURIComponent(k)}: ${v}`),
  );
  return fc
    .tuple(
      oneOf('GET', 'POST', 'DELETE', 'HEAD', 'PUT', 'OPTIONS'),
      target,
      fc.nat().map((i) => keys()[i % 4]!),
      fc.array(header, { maxLength: 4 }),
      fc.oneof(body, anyText),
    )
    .map(([method, t, key, hs, b]) => {
      const payload = Buffer.from(b);
      const head = `\r\nHost: localhost\r\nX-API-Key: ${key}\r\n${hs.map((h) => `${h}\r\n`).join('')}Content-Length: ${payload.length}\r\nConnection: close\r\n\r\n`;
      return Buffer.concat([Buffer.from(`${method} `), t, Buffer.from(' HTTP/1.1'), Buffer.from(head), payload]);
    });
}

function garbage(keys: () => string[]): fc.Arbitrary<Buffer> {
  const bytes = fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString('latin1'));
  const method = fc.oneof(oneOf('GET', 'POST', 'DELETE', 'FOO', 'G\u0000T', 'get', '', 'PRI', 'CONNECT', 'TRACE'), bytes);
  const target = fc.oneof(
    path,
    anyText.map((t) => `/pets/${Buffer.from(t).toString('latin1')}`),
    oneOf('*', 'http://evil.example/pets', '/pets?\u0000', '/pets#frag', 'pets'),
    bytes,
  );
  const version = oneOf('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1', '', 'http/1.1', 'HTTP/1.1 extra');
  const header = fc.oneof(
    fc.nat().map((i) => `X-API-Key: ${keys()[i % 4]}`),
    oneOf(
      'Content-Type: application/json',
      'Content-Length: 5',
      'Content-Length: -1',
      'Content-Length: 1, 2',
      'Transfer-Encoding: chunked',
      'Transfer-Encoding: gzip, chunked',
      'Host: a',
      'Host:',
      'No-Colon',
      ' Leading: space',
      'Bad Name: x',
      'X: a\u0000b',
      'X: a\rb',
      ' folded continuation',
      'Expect: 100-continue',
      'Connection: upgrade',
      'Upgrade: websocket',
    ),
    fc.tuple(bytes, bytes).map(([k, v]) => `${k}: ${v}`),
    fc.integer({ min: 10_000, max: 40_000 }).map((n) => `X-Huge: ${'h'.repeat(n)}`),
  );
  const framing = oneOf('\r\n', '\n', '\r');
  return fc
    .tuple(
      method,
      target,
      version,
      fc.array(header, { maxLength: 6 }),
      framing,
      fc.oneof(body, bytes, oneOf('5\r\nhello\r\n0\r\n\r\n', 'zz\r\nxx\r\n', '0\r\n\r\nGET /pets HTTP/1.1\r\nHost: a\r\n\r\n')),
    )
    .map(([m, t, v, hs, eol, b]) =>
      Buffer.concat([Buffer.from(`${m} ${t} ${v}${eol}Host: localhost${eol}${hs.join(eol)}${eol}${eol}`, 'latin1'), Buffer.from(b)]),
    );
}

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
      if (run.failed) throw new Error(`seed ${run.seed}, path "${run.counterexamplePath}": ${String(run.errorInstance).slice(0, 3_000)}`);
    },
  };
}

beforeAll(async () => {
  const file = join(tempDir(), 'petstore.db');
  const store = await testDatabase({ kind: 'sqlite', sqliteFile: file });
  const repository = new KeysRepository(store.db, systemClock);
  keys = [];
  for (let i = 0; i < 4; i++) keys.push((await repository.create({ plan: 'enterprise', perMinute: 1_000_000, perDay: 1_000_000 })).key);
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
    const req = request({ host: '127.0.0.1', port, agent, method: r.method, path: r.path, headers: r.headers, timeout: HANG_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
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
    socket.end(bytes);
  });
}

function parseResponses(text: string): Answer[] {
  const answers: Answer[] = [];
  while (text.startsWith('HTTP/1.1 ')) {
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
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
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'])
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
