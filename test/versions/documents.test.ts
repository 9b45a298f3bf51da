import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEWEST_VERSION, OLDEST_VERSION } from '../../src/versions/versions.js';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { type Json, operationsOf } from '../helpers/openapi.js';

/**
 * One document per version (`/openapi.json?version=`), each from
 * the schemas (the records: test/openapi/document.test.ts).
 */
let t: TestApp;
let doc: Json;
beforeAll(async () => {
  t = await testApp();
  doc = json(await t.app.inject({ url: '/openapi.json' }));
});
afterAll(async () => t.close());

describe('the documents of the versions', () => {
  it('is one per version: the oldest deprecated throughout, an unknown version a 400', async () => {
    const oldest = json(await t.app.inject({ url: `/openapi.json?version=${OLDEST_VERSION}` }));
    for (const { method, path, op } of operationsOf(oldest)) {
      expect(op.deprecated, `${method} ${path}`).toBe(true);
      for (const response of Object.values(op.responses as Record<string, Json>))
        expect(Object.keys(response.headers)).toContain('Sunset');
      // What needs no key refuses no version: the versions, the catalogue, what an OAuth client discovers.
      if (path !== '/versions' && path !== '/scenarios' && !path.startsWith('/.well-known/'))
        expect(JSON.stringify(op.responses['410']), `${method} ${path}`).toContain('VersionSunsetProblem');
    }
    expect(json(await t.app.inject({ url: `/openapi.json?version=${NEWEST_VERSION}` }))).toEqual(doc);
    const unknown = await t.app.inject({ url: '/openapi.json?version=2020-01-01' });
    expect(unknown.statusCode).toBe(400);
    expect(json(unknown).code).toBe('unknown-version');
  });
  it('has the same in YAML, for each version', async () => {
    const yaml = await t.app.inject({ url: `/openapi.yaml?version=${OLDEST_VERSION}` });
    expect(yaml.statusCode).toBe(200);
    expect(yaml.body).toContain(`version: "${OLDEST_VERSION}"`);
  });
});
