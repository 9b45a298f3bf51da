import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/keys/key-format.js';
import { type TestApp, testApp } from '../helpers/app.js';

/**
 * Hostile requests, over a real socket, to `GET /pets/{petId}` once memory holds the key and the pet
 * (its hottest path): each gets one whole answer, the one a client can rely on (never a `5xx`, never
 * silence), with the headers every answer carries.
 */

let t: TestApp;
let port: number;
let key = '';
const TARGET = '/pets/1';

beforeAll(async () => {
  t = await testApp();
  key = await t.newKey('pro');
  port = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
  // Memory now holds the key and the pet.
  expect((await send(head() + '\r\n')).map((a) => a.status)).toEqual([200]);
});
afterAll(async () => t.close());

/** The request line and the usual headers, without the blank line: a case adds headers and a body. */
function head({ method = 'GET', target = TARGET, key: sent = key } = {}): string {
  return `${method} ${target} HTTP/1.1\r\nHost: petstore.test\r\nX-API-Key: ${sent}\r\nX-Request-Id: same-id\r\nConnection: close\r\n`;
}

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

const PER_CONNECTION = new Set(['date', 'connection', 'keep-alive']);

/** Sends `raw` on a connection of its own and reads every answer until the server closes it. */
function send(raw: string, { headRequest = false } = {}): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(parse(Buffer.concat(chunks).toString('latin1'), headRequest)));
    socket.write(raw);
  });
}

function parse(text: string, headRequest: boolean): Answer[] {
  const answers: Answer[] = [];
  while (text.length > 0) {
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`an answer cut short: ${JSON.stringify(text)}`);
    const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
    const headers = lines.map(
      (line) =>
        [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as [string, string],
    );
    const length = headRequest ? 0 : Number(headers.find(([name]) => name === 'content-length')?.[1] ?? 0);
    const body = text.slice(end + 4, end + 4 + length);
    text = text.slice(end + 4 + length);
    answers.push({
      status: Number(statusLine!.split(' ')[1]),
      headers: headers.filter(([name]) => !PER_CONNECTION.has(name)).sort(),
      body,
    });
  }
  return answers;
}

/** Each case: the raw request, and the statuses of its answers. */
const CASES: Record<string, { raw: () => string; statuses: number[]; headRequest?: boolean }> = {
  'a plain GET': { raw: () => `${head()}\r\n`, statuses: [200] },
  'a GET with a body': {
    raw: () => `${head()}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    statuses: [200],
  },
  'a GET with a gzip body': {
    raw: () => `${head()}Content-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello`,
    statuses: [415],
  },
  'a GET with a text body': {
    raw: () => `${head()}Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello`,
    statuses: [200],
  },
  'a GET with a chunked body': {
    raw: () => `${head()}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`,
    statuses: [200],
  },
  'a GET with an encoding and no body': { raw: () => `${head()}Content-Encoding: br\r\n\r\n`, statuses: [200] },
  'a GET with Content-Length: 0': { raw: () => `${head()}Content-Length: 0\r\n\r\n`, statuses: [200] },
  HEAD: { raw: () => `${head({ method: 'HEAD' })}\r\n`, headRequest: true, statuses: [200] },
  'two keys': { raw: () => `${head()}X-API-Key: ${key}\r\n\r\n`, statuses: [401] },
  'a second Host': { raw: () => `${head()}Host: other.test\r\n\r\n`, statuses: [200] },
  'an absolute-form target': { raw: () => `${head({ target: `http://petstore.test${TARGET}` })}\r\n`, statuses: [200] },
  // Fastify reads what follows `#` as a query, and refuses it.
  'a fragment in the target': { raw: () => `${head({ target: '/pets/1#x' })}\r\n`, statuses: [400] },
  'a malformed key': { raw: () => `${head({ key: 'pet_nope' })}\r\n`, statuses: [401] },
  'no key': { raw: () => `${head().replace(/X-API-Key: .*\r\n/, '')}\r\n`, statuses: [401] },
  'an If-None-Match': { raw: () => `${head()}If-None-Match: "x"\r\n\r\n`, statuses: [200] },
  'an Expect: 100-continue without a body': {
    raw: () => `${head()}Expect: 100-continue\r\n\r\n`,
    statuses: [100, 200],
  },
  'an Origin (CORS)': { raw: () => `${head()}Origin: https://example.com\r\n\r\n`, statuses: [200] },
  'an unknown Accept': { raw: () => `${head()}Accept: text/csv\r\n\r\n`, statuses: [200] },
  'pipelined, the second with a body': {
    raw: () =>
      `${head().replace('Connection: close\r\n', '')}\r\n${head()}Content-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello`,
    statuses: [200, 415],
  },
};

/** What every answer carries, whatever it says. */
const EVERY_ANSWER = [
  'x-request-id',
  'petstore-version',
  'access-control-allow-origin',
  'x-ratelimit-limit',
  'ratelimit',
  'deprecation',
  'sunset',
];

describe('a hostile request to GET /pets/{petId}', () => {
  it.each(Object.keys(CASES))('gets its answer: %s', async (name) => {
    const { raw, headRequest, statuses } = CASES[name]!;
    const answers = await send(raw(), { headRequest });
    expect(answers.map((a) => a.status)).toEqual(statuses);
    // An interim `100 Continue` is Node's, before the request is read: the answer that follows carries them.
    for (const answer of answers.filter((a) => a.status >= 200)) {
      const names = answer.headers.map(([header]) => header);
      for (const header of EVERY_ANSWER) expect(names, `${header} on ${answer.status}`).toContain(header);
    }
  });
});

describe('a key refused', () => {
  /** A fresh key of `plan`, whose first request put it in memory. */
  async function warmKey(plan: 'free' | 'pro'): Promise<string> {
    const fresh = await t.newKey(plan);
    expect((await send(`${head({ key: fresh })}\r\n`))[0]!.status).toBe(200);
    return fresh;
  }

  it('is a 401 once the key memory holds is revoked', async () => {
    const fresh = await warmKey('pro');
    await t.keys.revoke((await t.keys.findByHash(hashKey(fresh)))!.id);
    expect((await send(`${head({ key: fresh })}\r\n`))[0]!.status).toBe(401);
  });

  it('gets 429s, then a ban, once the key is over its limit', async () => {
    const fresh = await warmKey('free');
    const answers: Answer[] = [];
    // The free plan's 60 a minute (one spent warming), then 12 refusals: the tenth starts a ban.
    for (let i = 0; i < 72; i++) answers.push(...(await send(`${head({ key: fresh })}\r\n`)));
    expect(answers.map((a) => a.status)).toEqual([...new Array(59).fill(200), ...new Array(13).fill(429)]);
    expect(JSON.parse(answers.at(-1)!.body)).toMatchObject({ status: 429, bannedUntil: expect.any(String) });
  });
});
