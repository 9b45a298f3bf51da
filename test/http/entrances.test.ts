import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../../src/keys/key-format.js';
import { type TestApp, testApp } from '../helpers/app.js';

/**
 * Hostile requests, over a real socket, through both entrances: `/pets/1` is the fast lane's once
 * memory holds the key and the pet (src/http/fast-lane.ts), `/pets/1?` always Fastify's. Each case
 * is sent once to each, with a key of its own (the same plan, the same count so far, the same clock),
 * (and an address of its own), and the two answers must be the same: status, headers (in any order; less the date and the
 * connection's own) and body. Where the lane cannot answer exactly as Fastify would, it must hand the
 * request over.
 */

let t: TestApp;
let port: number;
const keys: Record<Entrance, string> = { lane: '', fastify: '' };
type Entrance = 'lane' | 'fastify';
const target: Record<Entrance, string> = { lane: '/pets/1', fastify: '/pets/1?' };
const ADDRESS: Record<Entrance, string> = { lane: '198.51.100.1', fastify: '198.51.100.2' };

beforeAll(async () => {
  // Behind a trusted proxy, each entrance's requests come from an address of their own: a request
  // counted per address (no key, a bad one) counts apart too.
  t = await testApp({ env: { TRUST_PROXY: '127.0.0.1' } });
  keys.lane = await t.newKey('pro');
  keys.fastify = await t.newKey('pro');
  port = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
  // Memory now holds both keys and the pet: the lane's path is the lane's.
  for (const entrance of ['lane', 'fastify'] as const) expect((await send(head(entrance) + '\r\n')).length).toBe(1);
});
afterAll(async () => t.close());

/** The request line and the usual headers, without the blank line: a case adds headers and a body. */
function head(entrance: Entrance, { method = 'GET', target: path = target[entrance], key = keys[entrance] } = {}): string {
  return `${method} ${path} HTTP/1.1\r\nHost: petstore.test\r\nX-API-Key: ${key}\r\nX-Request-Id: same-id\r\nX-Forwarded-For: ${ADDRESS[entrance]}\r\nConnection: close\r\n`;
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
    const headers = lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as [string, string]);
    const length = headRequest ? 0 : Number(headers.find(([name]) => name === 'content-length')?.[1] ?? 0);
    const body = text.slice(end + 4, end + 4 + length);
    text = text.slice(end + 4 + length);
    answers.push({ status: Number(statusLine!.split(' ')[1]), headers: headers.filter(([name]) => !PER_CONNECTION.has(name)).sort(), body });
  }
  return answers;
}

/** Each case: the raw request for an entrance. */
const CASES: Record<string, { raw: (e: Entrance) => string; headRequest?: boolean }> = {
  'a plain GET': { raw: (e) => `${head(e)}\r\n` },
  'a GET with a body': { raw: (e) => `${head(e)}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}` },
  'a GET with a gzip body': { raw: (e) => `${head(e)}Content-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello` },
  'a GET with a text body': { raw: (e) => `${head(e)}Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello` },
  'a GET with a chunked body': { raw: (e) => `${head(e)}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n` },
  'a GET with an encoding and no body': { raw: (e) => `${head(e)}Content-Encoding: br\r\n\r\n` },
  'a GET with Content-Length: 0': { raw: (e) => `${head(e)}Content-Length: 0\r\n\r\n` },
  HEAD: { raw: (e) => `${head(e, { method: 'HEAD' })}\r\n`, headRequest: true },
  'two keys': { raw: (e) => `${head(e)}X-API-Key: ${keys[e]}\r\n\r\n` },
  'a second Host': { raw: (e) => `${head(e)}Host: other.test\r\n\r\n` },
  'an absolute-form target': { raw: (e) => `${head(e, { target: `http://petstore.test${target[e]}` })}\r\n` },
  // Not the lane's either way (its path is exact): Fastify reads what follows `#` as a query, and refuses it.
  'a fragment in the target': { raw: (e) => `${head(e, { target: '/pets/1#x' })}\r\n` },
  'a malformed key': { raw: (e) => `${head(e, { key: 'pet_nope' })}\r\n` },
  'no key': { raw: (e) => `${head(e).replace(/X-API-Key: .*\r\n/, '')}\r\n` },
  'an If-None-Match': { raw: (e) => `${head(e)}If-None-Match: "x"\r\n\r\n` },
  'an Expect: 100-continue without a body': { raw: (e) => `${head(e)}Expect: 100-continue\r\n\r\n` },
  'an Origin (CORS)': { raw: (e) => `${head(e)}Origin: https://example.com\r\n\r\n` },
  'an unknown Accept': { raw: (e) => `${head(e)}Accept: text/csv\r\n\r\n` },
  'pipelined, the second with a body': {
    raw: (e) => `${head(e).replace('Connection: close\r\n', '')}\r\n${head(e)}Content-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello`,
  },
};

describe('a hostile request, through the fast entrance and through Fastify', () => {
  it.each(Object.keys(CASES))('gets the same answer: %s', async (name) => {
    const { raw, headRequest } = CASES[name]!;
    const lane = await send(raw('lane'), { headRequest });
    const fastify = await send(raw('fastify'), { headRequest });
    expect(lane.length).toBeGreaterThan(0);
    expect(lane).toEqual(fastify);
  });
});

describe('a key refused, through the fast entrance and through Fastify', () => {
  /** A fresh key per entrance, of `plan`, whose first request put it (and the pet) in memory. */
  async function warmKeys(plan: 'free' | 'pro'): Promise<Record<Entrance, string>> {
    const fresh = { lane: await t.newKey(plan), fastify: await t.newKey(plan) };
    for (const entrance of ['lane', 'fastify'] as const) expect((await send(`${head(entrance, { key: fresh[entrance] })}\r\n`))[0]!.status).toBe(200);
    return fresh;
  }

  it('gets the same 401 once the key memory holds is revoked', async () => {
    const fresh = await warmKeys('pro');
    for (const key of Object.values(fresh)) await t.keys.revoke((await t.keys.findByHash(hashKey(key)))!.id);
    const lane = await send(`${head('lane', { key: fresh.lane })}\r\n`);
    const fastify = await send(`${head('fastify', { key: fresh.fastify })}\r\n`);
    expect(lane[0]!.status).toBe(401);
    expect(lane).toEqual(fastify);
  });

  it('gets the same 429s, then the same ban, once the key is over its limit', async () => {
    const fresh = await warmKeys('free');
    const answers: Record<Entrance, Answer[]> = { lane: [], fastify: [] };
    // The free plan's 60 a minute (one spent warming), then 12 refusals: the tenth starts a ban.
    for (let i = 0; i < 72; i++) {
      for (const entrance of ['lane', 'fastify'] as const) answers[entrance].push(...(await send(`${head(entrance, { key: fresh[entrance] })}\r\n`)));
    }
    expect(answers.lane.map((a) => a.status)).toEqual([...new Array(59).fill(200), ...new Array(13).fill(429)]);
    expect(answers.lane).toEqual(answers.fastify);
  });
});
