/**
 * The request log as HAR 1.2 (docs/request-log.md#har), valid against har-schema's JSON Schema; and no credential in
 * any entry or export, whatever carried it: a key, a token, a client secret, a child key, a webhook secret.
 */
import { Ajv } from 'ajv';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };
// @ts-expect-error -- har-schema ships its JSON Schemas without types: an object of them, by name.
import harSchemas from 'har-schema';
import { afterEach, describe, expect, it } from 'vitest';
import { NEWEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';

let t: TestApp;
afterEach(async () => t?.close());

const as = (key: string, more: Record<string, string> = {}) => ({
  'x-api-key': key,
  'petstore-version': NEWEST_VERSION,
  ...more,
});

/** har-schema's schemas, draft-06, each by its `$id`: the HAR 1.2 format as its authors wrote it. */
function harValidator() {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addMetaSchema(draft06);
  for (const schema of Object.values(harSchemas as Record<string, { $id?: string }>))
    if (typeof schema?.$id === 'string') ajv.addSchema(schema);
  const validate = ajv.getSchema('har.json');
  if (!validate) throw new Error('har-schema holds no har.json');
  return validate;
}

describe('the request log as HAR', () => {
  it('validates against HAR 1.2, with status 0 for an exchange with no answer', async () => {
    t = await testApp({ overSocket: true });
    const key = await t.newKey({ plan: 'free', test: true });
    await t.request({ url: '/pets?limit=2&status=available', headers: as(key) });
    await t.request({ method: 'POST', url: '/store/orders', headers: as(key), payload: { petId: 1, quantity: 1 } });
    await t.request({ url: '/pets/1', headers: as(key, { prefer: 'fault=reset' }) }).catch(() => undefined);
    const har = await t.request({ url: '/request-log.har', headers: as(key) });
    expect(har.statusCode).toBe(200);
    expect(har.headers['content-disposition']).toMatch(/^attachment; filename="petstore-key_[0-9a-f]+\.har"$/);
    const document = json(har);
    const validate = harValidator();
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    const [list, order, reset] = document.log.entries;
    expect(reset.response.status).toBe(0);
    expect(reset.comment).toMatch(/: reset, reset injected by Prefer: fault=reset$/);
    expect(order.request).toMatchObject({ method: 'POST', postData: { mimeType: 'application/json' } });
    expect(order.response.status).toBe(201);
    expect(list.request.url).toBe('http://petstore.test/pets?limit=2&status=available');
    expect(list.request.queryString).toEqual([
      { name: 'limit', value: '2' },
      { name: 'status', value: 'available' },
    ]);
    const entry = json(await t.request({ url: '/request-log?limit=1', headers: as(key) })).data[0];
    expect(entry).toMatchObject({ status: null, ending: 'reset', responseHeaders: {} });
  });

  it('holds no credential anywhere: keys, tokens, client secrets, child keys, webhook secrets', async () => {
    t = await testApp();
    const { key, record } = await t.keys.create({ plan: 'pro', test: true });
    const secrets: string[] = [key];
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const granted = json(
      await t.request({
        method: 'POST',
        url: '/oauth/token',
        headers: form,
        payload: `grant_type=client_credentials&client_id=${record.id}&client_secret=${key}`,
      }),
    );
    secrets.push(granted.access_token);
    await t.request({
      url: '/pets/1',
      headers: { authorization: `Bearer ${granted.access_token}`, 'petstore-version': NEWEST_VERSION },
    });
    const basic = Buffer.from(`${record.id}:${key}`).toString('base64');
    await t.request({
      method: 'POST',
      url: '/oauth/token',
      headers: { ...form, authorization: `Basic ${basic}` },
      payload: 'grant_type=client_credentials',
    });
    secrets.push(basic);
    const child = json(await t.request({ method: 'POST', url: '/test-keys', headers: as(key) }));
    secrets.push(child.key);
    const endpoint = json(
      await t.request({
        method: 'POST',
        url: '/webhook-endpoints',
        headers: as(key),
        payload: { url: 'http://127.0.0.1:9/hook', events: ['order.placed'] },
      }),
    );
    const rotated = json(
      await t.request({ method: 'POST', url: `/webhook-endpoints/${endpoint.id}/rotate-secret`, headers: as(key) }),
    );
    secrets.push(endpoint.secret, rotated.secret);
    // A key in the URL, too.
    await t.request({ url: `/pets/1?api_key=${key}`, headers: as(key) });
    expect(secrets.every(Boolean)).toBe(true);
    const log = (await t.request({ url: '/request-log?limit=100', headers: as(key) })).body;
    const har = (await t.request({ url: '/request-log.har?limit=100', headers: as(key) })).body;
    expect(json({ body: log }).data.length).toBeGreaterThanOrEqual(7);
    for (const secret of secrets) {
      const core = secret.slice(8);
      expect(log.includes(core), `the log shows ${secret.slice(0, 8)}…`).toBe(false);
      expect(har.includes(core), `the HAR shows ${secret.slice(0, 8)}…`).toBe(false);
    }
    expect(log).toContain(`${key.slice(0, 8)}…`);
  });

  it('cuts a body beyond 16 KB and says so', async () => {
    t = await testApp({ env: { BODY_LIMIT: String(64 * 1024) } });
    const key = await t.newKey({ plan: 'free', test: true });
    const big = { petId: 1, quantity: 1, note: 'x'.repeat(20_000) };
    await t.request({
      method: 'POST',
      url: '/store/orders',
      headers: as(key, { 'x-request-id': 'big' }),
      payload: big,
    });
    const entry = json(await t.request({ url: '/request-log/big', headers: as(key) }));
    expect(entry.truncated).toBe(true);
    expect(Buffer.byteLength(entry.requestBody)).toBeLessThanOrEqual(16 * 1024);
    expect(entry.requestBody.startsWith('{"petId":1,"quantity":1,"note":"xxx')).toBe(true);
  });
});
