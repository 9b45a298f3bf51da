import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';

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
    const parsed = lines.map((line) => JSON.parse(line) as { reqId?: string; msg: string; statusCode?: number; responseTime?: number; req?: { url: string } });
    for (const [id, status] of [['one-line-200', 200], ['one-line-404', 404], ['one-line-401', 401]] as const) {
      const mine = parsed.filter((line) => line.reqId === id);
      expect(mine, id).toEqual([expect.objectContaining({ msg: 'request completed', statusCode: status, responseTime: expect.any(Number) })]);
    }
    expect(lines.join('\n')).not.toContain(key.slice('pet_'.length));
  });
});
