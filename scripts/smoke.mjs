// The built service, started as a user starts it, and every operation of its document called once:
// what .ci/run runs on each Node.js line beside the one the suite runs on, after a production install
// (`npm ci --omit=dev`). Plain JavaScript (checked by tsc) so that it needs nothing the production
// install leaves out.
//
//   node scripts/smoke.mjs [the service's folder, default this one]
//
// It starts `dist/main.js` on a new SQLite file and free ports, reads the demo keys it prints, calls
// every operation (a webhook receiver of its own on 127.0.0.1 takes the deliveries), fails unless each
// answered as it should and every operation of /openapi.json was called, then stops the service with
// SIGTERM and fails unless it exits 0. Prints one line per call and a closing line.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const folder = resolve(process.argv[2] ?? '.');
const data = mkdtempSync(join(tmpdir(), 'petstore-smoke-'));

/** @returns {Promise<number>} a port nothing listens on now */
function freePort() {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}

/** @param {number} ms */
const pause = (ms) => new Promise((done) => setTimeout(done, ms));

/** @param {string} what @param {() => Promise<boolean>} condition */
async function until(what, condition, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`smoke: ${what}: not within ${ms / 1000} s`);
    await pause(100);
  }
}

const [port, adminPort, receiverPort] = [await freePort(), await freePort(), await freePort()];
const base = `http://127.0.0.1:${port}`;
const service = spawn(process.execPath, [join(folder, 'dist/main.js')], {
  cwd: folder,
  env: {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    DATABASE_URL: join(data, 'petstore.db'),
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let output = '';
service.stdout.on('data', (chunk) => (output += chunk));
service.stderr.on('data', (chunk) => (output += chunk));
/** @type {Promise<number | string | null>} */
const exited = new Promise((done) => service.on('exit', (code, signal) => done(code ?? signal)));

// Every delivery the service makes is answered 200.
/** @type {string[]} */
const delivered = [];
const receiver = createServer((request, response) => {
  request.resume().on('end', () => {
    delivered.push(String(request.headers['webhook-id']));
    response.writeHead(200).end();
  });
}).listen(receiverPort, '127.0.0.1');

/** The operations called, as `METHOD /template`. */
const called = new Set();
let failures = 0;

/**
 * Calls one operation and checks its status.
 * @param {string} method
 * @param {string} template the path as the document writes it
 * @param {string} path
 * @param {number} expected
 * @param {{ key?: string, body?: unknown, form?: string, headers?: Record<string, string> }} [options]
 * @returns {Promise<any>} the answer's JSON body, or its text
 */
async function call(method, template, path, expected, { key, body, form, headers = {} } = {}) {
  called.add(`${method} ${template}`);
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      ...headers,
    },
    body: form ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await response.text();
  const ok = response.status === expected;
  if (!ok) failures++;
  process.stdout.write(
    `${ok ? 'ok  ' : 'FAIL'} ${method} ${path} ${response.status}${ok ? '' : ` (expected ${expected}): ${text.slice(0, 300)}`}\n`,
  );
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

try {
  await until('the service to start', async () => (await fetch(`http://127.0.0.1:${adminPort}/readyz`)).ok);
  /** @param {string} plan */
  const demoKey = (plan) => {
    const line = new RegExp(`^ {2}${plan} +(pet_[A-Za-z0-9_-]+)$`, 'm').exec(output);
    if (!line) throw new Error(`smoke: no ${plan} demo key in the service's output:\n${output}`);
    return /** @type {string} */ (line[1]);
  };
  const key = demoKey('pro');
  const testKey = demoKey('test');

  const document = await call('GET', '/openapi.json', '/openapi.json', 200);
  await call('GET', '/openapi.yaml', '/openapi.yaml', 200);
  await call('GET', '/docs', '/docs', 200);
  await call('GET', '/versions', '/versions', 200);
  await call('GET', '/', '/', 200);

  await call('GET', '/pets', '/pets?status=available&limit=5', 200, { key });
  await call('GET', '/pets/{petId}', '/pets/1', 200, { key });
  await call('GET', '/usage', '/usage', 200, { key });

  // The free demo key as an OAuth client: its token line names its id.
  const client = / {2}a token: +curl -s -u '(key_[0-9a-f]+):(pet_[A-Za-z0-9_-]+)'/.exec(output);
  if (!client) throw new Error(`smoke: no token line in the service's output:\n${output}`);
  const basic = `Basic ${Buffer.from(`${client[1]}:${client[2]}`).toString('base64')}`;
  await call('GET', '/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server', 200);
  await call('GET', '/.well-known/jwks.json', '/.well-known/jwks.json', 200);
  const granted = await call('POST', '/oauth/token', '/oauth/token', 200, {
    form: 'grant_type=client_credentials&scope=pets:read',
    headers: { authorization: basic },
  });
  await call('GET', '/pets/{petId}', '/pets/2', 200, { headers: { authorization: `Bearer ${granted.access_token}` } });

  const order = await call('POST', '/store/orders', '/store/orders', 201, {
    key: testKey,
    body: { petId: 1, quantity: 2 },
    headers: { 'idempotency-key': 'smoke-1', 'x-request-id': 'smoke-order' },
  });
  await call('GET', '/store/orders', '/store/orders', 200, { key: testKey });
  await call('GET', '/store/orders/{orderId}', `/store/orders/${order.id}`, 200, { key: testKey });
  await call('POST', '/store/orders/{orderId}/advance', `/store/orders/${order.id}/advance`, 200, { key: testKey });
  await call('DELETE', '/store/orders/{orderId}', `/store/orders/${order.id}`, 200, { key: testKey });
  const events = await call('GET', '/events', `/events?orderId=${order.id}`, 200, { key: testKey });
  await call('GET', '/events/{eventId}', `/events/${events.data[0].id}`, 200, { key: testKey });
  // The stream from the order's second event: its third, then dropped (a test key's `fault=drop`), so that it ends.
  const stream = await call('GET', '/events/stream', `/events/stream?after=${events.data[1].id}`, 200, {
    key: testKey,
    headers: { prefer: 'fault=drop' },
  });
  if (!String(stream).includes(`id: ${events.data[0].id}\n`)) {
    failures++;
    process.stdout.write(`FAIL the stream did not send ${events.data[0].id}: ${String(stream).slice(0, 300)}\n`);
  }

  const endpoint = await call('POST', '/webhook-endpoints', '/webhook-endpoints', 201, {
    key: testKey,
    body: { url: `http://127.0.0.1:${receiverPort}/` },
  });
  await call('GET', '/webhook-endpoints', '/webhook-endpoints', 200, { key: testKey });
  const at = `/webhook-endpoints/${endpoint.id}`;
  await call('GET', '/webhook-endpoints/{endpointId}', at, 200, { key: testKey });
  await call('PATCH', '/webhook-endpoints/{endpointId}', at, 200, { key: testKey, body: { description: 'smoke' } });
  await call('POST', '/webhook-endpoints/{endpointId}/rotate-secret', `${at}/rotate-secret`, 200, { key: testKey });
  await call('POST', '/webhook-endpoints/{endpointId}/test', `${at}/test`, 202, { key: testKey });
  await until('a delivery to the receiver', async () => delivered.length > 0);
  const deliveries = await call('GET', '/webhook-endpoints/{endpointId}/deliveries', `${at}/deliveries`, 200, {
    key: testKey,
  });
  await call(
    'POST',
    '/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry',
    `${at}/deliveries/${deliveries.data[0].id}/retry`,
    202,
    { key: testKey },
  );
  // The exam answers 200 with its verdict, whatever this receiver (which answers everything) makes of the forged cases.
  await call('POST', '/webhook-endpoints/{endpointId}/exam', `${at}/exam`, 200, { key: testKey });
  await call('DELETE', '/webhook-endpoints/{endpointId}', at, 204, { key: testKey });
  await call('GET', '/test-clock', '/test-clock', 200, { key: testKey });
  await call('POST', '/test-clock/freeze', '/test-clock/freeze', 200, { key: testKey });
  await call('POST', '/test-clock/advance', '/test-clock/advance', 200, { key: testKey, body: { seconds: 70 } });
  await call('POST', '/test-clock/resume', '/test-clock/resume', 200, { key: testKey });
  const child = await call('POST', '/test-keys', '/test-keys', 201, { key: testKey });
  await call('DELETE', '/test-keys/{keyId}', `/test-keys/${child.id}`, 204, { key: testKey });
  await call('GET', '/scenarios', '/scenarios', 200);
  const body = { scenario: 'retry-after-503' };
  await call('PUT', '/test-scenario', '/test-scenario', 200, { key: testKey, body });
  await call('GET', '/pets/{petId}', '/pets/1', 503, { key: testKey });
  await call('GET', '/test-scenario', '/test-scenario', 200, { key: testKey });
  await call('DELETE', '/test-scenario', '/test-scenario', 200, { key: testKey });
  await call('GET', '/report-card', '/report-card', 200, { key: testKey });
  await call('DELETE', '/report-card', '/report-card', 200, { key: testKey });
  await call('GET', '/request-log', '/request-log?limit=5', 200, { key: testKey });
  await call('GET', '/request-log.har', '/request-log.har?limit=5', 200, { key: testKey });
  await call('GET', '/request-log/{requestId}', '/request-log/smoke-order', 200, { key: testKey });
  await call('DELETE', '/test-data', '/test-data', 200, { key: testKey });

  for (const path of ['/healthz', '/readyz', '/metrics']) {
    const response = await fetch(`http://127.0.0.1:${adminPort}${path}`);
    if (response.status !== 200) failures++;
    process.stdout.write(`${response.status === 200 ? 'ok  ' : 'FAIL'} GET ${path} (admin) ${response.status}\n`);
  }

  /** @type {Record<string, Record<string, unknown>>} */
  const paths = document.paths;
  const operations = Object.entries(paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
  const missed = operations.filter((operation) => !called.has(operation));
  if (missed.length > 0) {
    failures++;
    process.stdout.write(`FAIL operations of the document never called: ${missed.join(', ')}\n`);
  }
} catch (error) {
  failures++;
  process.stdout.write(`FAIL ${error instanceof Error ? error.message : String(error)}\n`);
} finally {
  receiver.close();
  if (service.exitCode === null) service.kill('SIGTERM');
  const code = await Promise.race([exited, pause(15_000).then(() => 'still running 15 s after SIGTERM')]);
  if (code !== 0) {
    failures++;
    process.stdout.write(`FAIL the service ended with ${code}:\n${output}\n`);
  }
  rmSync(data, { recursive: true, force: true });
}
process.stdout.write(
  `smoke on Node.js ${process.version}: ${called.size} operations called, ${failures === 0 ? 'all as expected' : `${failures} failures`}\n`,
);
process.exit(failures === 0 ? 0 : 1);
