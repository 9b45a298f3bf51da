import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
afterAll(async () => t.close());

/** One GET over its own socket, so that all of them are really concurrent on the wire. */
function get(port: number, key: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { port, host: '127.0.0.1', path: '/pets?limit=1', headers: { 'x-api-key': key }, agent },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('over real HTTP', () => {
  it('500 concurrent requests with one free key: exactly 60 admitted, the rest 429', async () => {
    // 500 sockets from one address stand for 500 clients: above the default allowance per address.
    t = await testApp({ env: { MAX_CONNECTIONS_PER_ADDRESS: '1000' } });
    const key = await t.newKey('free');
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
    const statuses = await Promise.all(Array.from({ length: 500 }, () => get(port, key, agent)));
    const count = (status: number) => statuses.filter((s) => s === status).length;
    expect(count(200)).toBe(60);
    expect(count(429)).toBe(440);
  });
});
