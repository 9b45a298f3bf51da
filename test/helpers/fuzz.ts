/**
 * What test/e2e/fuzz.test.ts sends (fast-check arbitraries): requests well formed but hostile, for
 * node:http to send, and bytes malformed on the wire, for raw sockets. Most requests carry one of a
 * few enterprise keys (`keys()`, filled once the server is up), so that they reach the handlers
 * instead of the anonymous 429.
 */
import fc from 'fast-check';

// ---- What is generated -------------------------------------------------------------------------

export interface HostileRequest {
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
  oneOf(
    'pets',
    'store',
    'orders',
    'openapi.json',
    'docs',
    'problems',
    'rate-limited',
    'admin',
    '..',
    '%2e%2e',
    '%00',
    '%ZZ',
    '%',
    '~',
  ),
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
        fc.oneof(
          oneOf('1', '0', '100', '101', '-1', 'abc', 'available', 'sold', '', '%00', '%ZZ'),
          anyText.map(encodeURIComponent),
        ),
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
export function hostileRequest(keys: () => string[]): fc.Arbitrary<HostileRequest> {
  const key = fc.nat().map((i) => keys()[i % 4]!);
  const order = fc
    .record(
      {
        petId: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 16 }) }, fc.integer()),
        quantity: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: -1, max: 9 }) }, fc.double()),
        shipDate: fc
          .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString()),
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
          fc
            .tuple(oneOf('/pets/', '/store/orders/'), fc.oneof(fc.integer({ min: 1, max: 60 }).map(String), id))
            .map(([p, i]) => p + i),
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
      headers: {
        'x-api-key': apiKey,
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      body: method === 'POST' ? payload : undefined,
    }));
  return fc.oneof(anything(keys), aimed).map((r) => {
    const headers = Object.fromEntries(Object.entries(r.headers).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >;
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
export function rawRequest(keys: () => string[]): fc.Arbitrary<Buffer> {
  return fc.oneof(garbage(keys), framed(keys));
}

/**
 * A framed request (length, Connection: close) whose target,
 * headers and body hold what a client library would refuse to send.
 */
function framed(keys: () => string[]): fc.Arbitrary<Buffer> {
  const target = fc.oneof(
    fc
      .tuple(oneOf('/pets/', '/store/orders', '/pets?status=', '/store/orders?cursor='), anyText)
      .map(([p, t]) => Buffer.concat([Buffer.from(p), Buffer.from(t)])),
    path.map((p) => Buffer.from(p)),
  );
  const header = fc.oneof(
    oneOf(
      'Content-Type: application/json',
      'Content-Type: text/plain',
      'X-Request-Id: a\tb',
      'Accept: */*',
      'Idempotency-Key: x',
      'X-Forwarded-For: 1.2.3.4',
    ),
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
  const method = fc.oneof(
    oneOf('GET', 'POST', 'DELETE', 'FOO', 'G\u0000T', 'get', '', 'PRI', 'CONNECT', 'TRACE'),
    bytes,
  );
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
      fc.oneof(
        body,
        bytes,
        oneOf('5\r\nhello\r\n0\r\n\r\n', 'zz\r\nxx\r\n', '0\r\n\r\nGET /pets HTTP/1.1\r\nHost: a\r\n\r\n'),
      ),
    )
    .map(([m, t, v, hs, eol, b]) =>
      Buffer.concat([
        Buffer.from(`${m} ${t} ${v}${eol}Host: localhost${eol}${hs.join(eol)}${eol}${eol}`, 'latin1'),
        Buffer.from(b),
      ]),
    );
}
