import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/orders.js';

/**
 * A query takes only the parameters its operation declares, the same everywhere: one it does not, in
 * any form (`type[]=`, `version[]=`, a misspelt name), is a `400` that names it, and changes nothing,
 * so that a client never takes an unfiltered answer for a filtered one.
 */

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await testApp();
  key = await t.newKey('business');
});
afterAll(async () => t.close());

describe('a query parameter the operation does not declare', () => {
  it.each([
    ['/events?type[]=order.placed', 'type[]'],
    ['/events?type%5B%5D=order.placed', 'type[]'],
    ['/pets?stauts=sold', 'stauts'],
    ['/pets?status=sold&limit=1&x=1', 'x'],
    ['/pets/1?x=1', 'x'],
    ['/store/orders?cursor[]=a', 'cursor[]'],
    ['/webhook-endpoints?page=2', 'page'],
    ['/usage?verbose=true', 'verbose'],
    ['/openapi.json?version[]=2025-06-01', 'version[]'],
    ['/openapi.yaml?v=1', 'v'],
    ['/versions?all=1', 'all'],
  ])('%s is a 400 naming %s', async (url, name) => {
    const response = await t.request({ url, headers: { 'x-api-key': key } });
    expectProblem(response, 400, 'invalid-request');
    expect(json(response).errors).toEqual([{ in: 'query', name, message: 'is not a known parameter' }]);
  });

  it('places no order: POST /store/orders?dryRun=true is a 400 and the key has no order', async () => {
    const placed = await t.request({
      method: 'POST',
      url: '/store/orders?dryRun=true',
      headers: { 'x-api-key': key },
      payload: { petId: 1, quantity: 1 },
    });
    expectProblem(placed, 400, 'invalid-request');
    expect(json(placed).errors).toEqual([{ in: 'query', name: 'dryRun', message: 'is not a known parameter' }]);
    expect(
      json<{ data: unknown[] }>(await t.request({ url: '/store/orders', headers: { 'x-api-key': key } })).data,
    ).toEqual([]);
  });

  it('declared ones still work, repeated ones too (`type=a&type=b`), and an empty query is no query', async () => {
    for (const url of [
      '/events?type=order.placed&type=order.approved',
      '/pets?status=sold&limit=1',
      '/pets/1?',
      '/openapi.json?version=2025-06-01',
    ]) {
      expect((await t.request({ url, headers: { 'x-api-key': key } })).statusCode, url).toBe(200);
    }
  });
});
