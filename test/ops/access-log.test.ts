import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { accessLog } from '../../src/ops/access-log.js';
import { createLogger } from '../../src/ops/logger.js';
import { type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
const lines: string[] = [];
beforeAll(async () => {
  t = await testApp({ logLines: lines });
});
afterAll(async () => t.close());

describe('the access log at LOG_LEVEL=info', () => {
  it('writes one line per request, when it is answered, with its status and time and without the key', async () => {
    const key = await t.newKey('pro');
    const requests = [
      { url: '/pets/1', headers: { 'x-api-key': key, 'x-request-id': 'one-line-200' } },
      { url: '/pets/999', headers: { 'x-api-key': key, 'x-request-id': 'one-line-404' } },
      { url: `/pets?api_key=${key}`, headers: { 'x-request-id': 'one-line-401' } },
    ];
    for (const request of requests) await t.app.inject(request);
    const parsed = lines.map(
      (line) =>
        JSON.parse(line) as {
          reqId?: string;
          msg: string;
          statusCode?: number;
          responseTime?: number;
          req?: { url: string };
        },
    );
    for (const [id, status] of [
      ['one-line-200', 200],
      ['one-line-404', 404],
      ['one-line-401', 401],
    ] as const) {
      const mine = parsed.filter((line) => line.reqId === id);
      expect(mine, id).toEqual([
        expect.objectContaining({ msg: 'request completed', statusCode: status, responseTime: expect.any(Number) }),
      ]);
    }
    expect(lines.join('\n')).not.toContain(key.slice('pet_'.length));
  });
});

describe('the access line, written by hand', () => {
  it('is the line pino writes for the same fields: the same members in the same order, secrets hidden alike', () => {
    const written: string[] = [];
    const logger = createLogger('info', { write: (line: string) => void written.push(line) }, ['admin-secret-token']);
    const request = {
      id: 'req-"quoted"\\-é',
      method: 'GET',
      url: '/pets/1?api_key=pet_x&q=admin-secret-token',
      ip: '::1',
    };
    const fields = { reqId: request.id, req: request, statusCode: 429, responseTime: 1.2345678 };
    logger.info(fields, 'request completed');
    accessLog(logger)(request, 429, 1.2345678);
    logger.info({ ...fields, req: { ...request, ip: undefined } }, 'request completed');
    accessLog(logger)({ ...request, ip: undefined }, 429, 1.2345678);
    expect(written).toHaveLength(4);
    const [byPino, byHand, byPinoNoIp, byHandNoIp] = written.map(
      (line) => ({ ...JSON.parse(line), time: 0 }) as Record<string, unknown>,
    );
    expect(Object.entries(byHand!)).toEqual(Object.entries(byPino!));
    expect(Object.entries(byHandNoIp!)).toEqual(Object.entries(byPinoNoIp!));
    expect(written[1]).toMatch(/\n$/);
    expect(written.join('')).not.toContain('admin-secret-token');
  });

  it('writes nothing above info', () => {
    const written: string[] = [];
    accessLog(createLogger('warn', { write: (line: string) => void written.push(line) }))(
      { id: 'x', method: 'GET', url: '/', ip: '::1' },
      200,
      1,
    );
    expect(written).toEqual([]);
  });
});

describe('a client cut off', () => {
  let s: TestApp;
  const logged: string[] = [];
  beforeAll(async () => {
    s = await testApp({ logLines: logged });
  });
  afterAll(async () => s.close());

  it('a client that stops sending its body is logged as that, not as an error or a store outage', async () => {
    const key = await s.newKey('pro');
    const base = await s.app.listen({ host: '127.0.0.1', port: 0 });
    logged.length = 0;
    const { port } = new URL(base);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /store/orders HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nX-Request-Id: cut-off\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"petId":`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 50);
      });
    });
    await vi.waitFor(() => expect(logged.some((l) => l.includes('"cut-off"') && l.includes('aborted'))).toBe(true));
    // Let anything else it would log arrive.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const mine = logged
      .map((l) => JSON.parse(l) as { reqId?: string; level: number; msg: string })
      .filter((l) => l.reqId === 'cut-off');
    expect(mine).toEqual([expect.objectContaining({ level: 30, msg: 'request aborted by the client' })]);
  });
});
