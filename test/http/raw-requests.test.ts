import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS_POLICY } from '../../src/ratelimit/plans.js';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { type TestApp, testApp } from '../helpers/app.js';

/**
 * Requests Node itself would answer or drop before any handler (an `Expect` it does not know, a
 * `CONNECT`) are answered like every other refusal: a problem with the request id, CORS and
 * rate-limit headers. Sent over a socket, as written, since a client library would not send them.
 */

let t: TestApp;
let port: number;
let key: string;
beforeAll(async () => {
  t = await testApp();
  key = await t.newKey('pro');
  port = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
});
afterAll(async () => t.close());

/** Sends `text` and reads until the server closes or the answer is complete. */
function exchange(
  text: string,
  to = port,
): Promise<{ status: number; headers: Record<string, string>; body: string; closed: boolean; raw: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(to, '127.0.0.1');
    let raw = '';
    let closed = false;
    const done = () => {
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      socket.destroy();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, closed, raw });
    };
    socket.on('data', (chunk) => {
      raw += chunk.toString();
      const [head, body] = raw.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '').split('\r\n\r\n');
      const length = /content-length: *(\d+)/i.exec(head ?? '')?.[1];
      if (body !== undefined && length !== undefined && Buffer.byteLength(body) >= Number(length)) setTimeout(done, 20);
    });
    socket.on('end', () => {
      closed = true;
      done();
    });
    socket.on('error', reject);
    socket.write(text);
  });
}

function expectProblemWithHeaders(answer: Awaited<ReturnType<typeof exchange>>, status: number, slug: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/problem+json; charset=utf-8');
  expect(JSON.parse(answer.body)).toMatchObject({ type: `http://petstore.test/problems/${slug}`, status });
  for (const name of [
    'x-request-id',
    'petstore-version',
    'access-control-allow-origin',
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'ratelimit-policy',
    'ratelimit',
  ]) {
    expect(answer.headers[name], name).toBeDefined();
  }
}

describe('requests Node would answer by itself', () => {
  it('an Expect other than 100-continue gets a 417 problem with the headers, counted to the key', async () => {
    const answer = await exchange(
      `GET /pets/1 HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nExpect: bogus\r\nConnection: close\r\n\r\n`,
    );
    expectProblemWithHeaders(answer, 417, 'expectation-failed');
    expect(answer.headers['x-ratelimit-limit']).toBe('300');
    expect(answer.headers['x-ratelimit-remaining']).toBe('299');
  });

  it('Expect: 100-continue still works: the body is asked for and the order placed', async () => {
    const body = JSON.stringify({ petId: 1 });
    const answer = await exchange(
      `POST /store/orders HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n${body}`,
    );
    // The interim 100 comes first; the final answer follows it.
    expect(answer.raw).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 Created\r\n/);
  });

  it.each(['/pets/1', '/pets/1?'])(
    'an HTTP/1.1 request without Host gets a 400 problem with the headers, counted to the key (%s)',
    async (path) => {
      const before = Number(
        (await exchange(`GET /usage HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`)).headers[
          'x-ratelimit-remaining'
        ],
      );
      const answer = await exchange(`GET ${path} HTTP/1.1\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`);
      expectProblemWithHeaders(answer, 400, 'invalid-request');
      expect(JSON.parse(answer.body).errors).toEqual([
        { in: 'header', name: 'Host', message: 'is required in HTTP/1.1' },
      ]);
      expect(Number(answer.headers['x-ratelimit-remaining'])).toBe(before - 1);
      // HTTP/1.0 has no Host to require.
      expect((await exchange(`GET ${path} HTTP/1.0\r\nX-API-Key: ${key}\r\n\r\n`)).status).toBe(200);
    },
  );

  it('the admin listener answers a request without Host with a 400 problem too', async () => {
    const adminPort = Number(new URL(await t.admin.listen({ host: '127.0.0.1', port: 0 })).port);
    const answer = await exchange('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n', adminPort);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      type: 'http://petstore.test/problems/invalid-request',
      status: 400,
    });
    expect(answer.headers['x-request-id']).toBeDefined();
  });

  it('CONNECT gets a 405 problem with the headers of the address, and the connection is closed', async () => {
    const answer = await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expectProblemWithHeaders(answer, 405, 'method-not-allowed');
    expect(answer.headers['x-ratelimit-limit']).toBe(String(ANONYMOUS_POLICY.perMinute));
    expect(answer.closed).toBe(true);
  });

  it.each([
    ['a NUL in a header value', `GET /pets/1 HTTP/1.1\r\nHost: x\r\nX-API-Key: a\0b\r\n\r\n`],
    ['a request line that is not HTTP', 'GET /pets/1 HTTP/9.9 please\r\n\r\n'],
  ])(
    '%s gets a 400 problem with the headers of every answer (its version too), and the connection is closed',
    async (_, text) => {
      const answer = await exchange(text);
      expectProblemWithHeaders(answer, 400, 'invalid-request');
      expect(answer.headers['petstore-version']).toBe(NEWEST_VERSION);
      expect(answer.closed).toBe(true);
    },
  );
});

describe('what one client can hold', () => {
  it('an answer nobody reads is abandoned after SEND_TIMEOUT_SECONDS, and its connection closed', async () => {
    const slow = await testApp({ env: { SEND_TIMEOUT_SECONDS: '1' } });
    try {
      const slowPort = Number(new URL(await slow.app.listen({ host: '127.0.0.1', port: 0 })).port);
      const size = Number(
        (await slow.app.inject({ url: '/docs/assets/swagger-ui-bundle.js' })).headers['content-length'],
      );
      // Far more than the kernel's buffers on both sides hold: the server is left with bytes it cannot send.
      const requests = 20;
      const socket = connect(slowPort, '127.0.0.1');
      socket.write('GET /docs/assets/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(requests));
      socket.pause();
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.on('error', () => {});
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      let received = 0;
      socket.on('data', (chunk: Buffer) => (received += chunk.length));
      socket.resume();
      await closed;
      expect(received).toBeLessThan(requests * size);
    } finally {
      await slow.close();
    }
  });

  it('one address holds at most MAX_CONNECTIONS_PER_ADDRESS connections; the next gets a 429 problem and is closed', async () => {
    const capped = await testApp({ env: { MAX_CONNECTIONS_PER_ADDRESS: '3' } });
    try {
      const cappedPort = Number(new URL(await capped.app.listen({ host: '127.0.0.1', port: 0 })).port);
      const held = await Promise.all(
        [1, 2, 3].map(
          () =>
            new Promise<ReturnType<typeof connect>>((resolve) => {
              const s = connect(cappedPort, '127.0.0.1', () => resolve(s));
            }),
        ),
      );
      const refused = await exchange('GET /pets/1 HTTP/1.1\r\nHost: x\r\n\r\n', cappedPort);
      expect(refused.status).toBe(429);
      expect(JSON.parse(refused.body)).toMatchObject({
        type: 'http://petstore.test/problems/too-many-connections',
        status: 429,
      });
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers['x-ratelimit-limit']).toBeDefined();
      expect(refused.closed).toBe(true);
      // One closed: room for one more.
      await new Promise<void>((resolve) => {
        held[0]!.once('close', () => resolve());
        held[0]!.destroy();
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const admitted = await exchange('GET /pets/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', cappedPort);
      expect(admitted.status).toBe(401);
      for (const s of held) s.destroy();
    } finally {
      await capped.close();
    }
  });
});
