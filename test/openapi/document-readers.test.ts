/**
 * The OpenAPI document the app serves, held to the routes it describes (a route for every operation,
 * 405 for every other method) and as its readers take it: tools that read only the standard, people
 * reading /docs, and GET /'s index. (The document itself: document.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { EXPECTED_OPERATIONS, type Json, operationsOf, RATE_LIMIT_HEADERS } from '../helpers/openapi.js';

let t: TestApp;
let key: string;
let doc: Json;

beforeAll(async () => {
  t = await testApp();
  key = await t.newKey('business');
  const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  doc = json(response);
});
afterAll(async () => {
  await t.close();
});

describe('the document matches the routes', () => {
  it('has a registered route for every documented operation', () => {
    for (const { method, path } of operationsOf(doc)) {
      const url = path.replace(/\{(\w+)\}/g, ':$1');
      expect(t.app.hasRoute({ method: method as 'GET', url }), `${method} ${url}`).toBe(true);
    }
  });

  it('answers exactly the documented methods on every documented path (405 for the others)', async () => {
    const documented = new Set(operationsOf(doc).map((o) => `${o.method} ${o.path}`));
    // Real ids, so that a 404 can only mean an unknown path.
    const placed = await t.app.inject({
      method: 'POST',
      url: '/store/orders',
      headers: { 'x-api-key': key },
      payload: { petId: 1, quantity: 1 },
    });
    expect(placed.statusCode).toBe(201);
    const ids: Record<string, string> = { petId: '1', orderId: String(json(placed).id) };
    const found = new Set<string>();
    for (const path of new Set(operationsOf(doc).map((o) => o.path))) {
      const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name] ?? '1');
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
        // As a stream, so that the event stream's answer is read as far as its status, then closed.
        const response = await t.app.inject({ method, url, headers: { 'x-api-key': key }, payloadAsStream: true });
        response.stream().destroy();
        expect(response.statusCode, `${method} ${url}`).not.toBe(404);
        if (response.statusCode !== 405) found.add(`${method} ${path}`);
      }
    }
    expect(found).toEqual(documented);
  });
});

describe('for tools that read only the standard', () => {
  it('marks the headers that are always sent required, and declares Idempotent-Replayed on the 201, optional', () => {
    for (const name of [
      ...RATE_LIMIT_HEADERS,
      'X-Request-Id',
      'Access-Control-Allow-Origin',
      'Deprecation',
      'Sunset',
      'Link',
    ]) {
      expect(doc.components.headers[name].required, name).toBe(true);
    }
    expect(doc.components.headers['Retry-After'].required).toBeUndefined();
    const placed = doc.paths['/store/orders'].post.responses['201'].headers;
    expect(placed.Location.required).toBe(true);
    expect(placed['Idempotent-Replayed']).toMatchObject({ required: false, schema: { type: 'string', const: 'true' } });
  });

  it('writes YAML that YAML 1.1 loaders read as the same document: the sunset stays a string', async () => {
    const yaml = (await t.app.inject({ method: 'GET', url: '/openapi.yaml' })).body;
    expect(yaml).toContain('x-deprecated-sunset: "2027-07-01"');
    const read = parseYaml(yaml, { version: '1.1' });
    expect(read.paths['/pets/{petId}'].get['x-deprecated-sunset']).toBe('2027-07-01');
    expect(read).toEqual(doc);
  });

  it('says each stability mark in the description and as a badge; says nothing where there is none', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      const mark = op['x-stability'] as string | undefined;
      if (!mark) {
        expect(op['x-badges'], `${method} ${path}`).toBeUndefined();
        continue;
      }
      const word = mark === 'beta' ? 'Beta' : 'Experimental';
      expect(op.description, `${method} ${path}`).toMatch(new RegExp(`^\\*\\*${word}\\*\\*: `));
      expect(op['x-badges']).toEqual([{ name: word, label: word, position: 'before' }]);
    }
  });

  it('requires the key at the top level, and gives every path parameter an example', () => {
    expect(doc.security).toEqual([{ ApiKey: [] }, { OAuth2: [] }]);
    const parameters = operationsOf(doc).flatMap(({ op }) =>
      (op.parameters ?? []).filter((p: Json) => p.in === 'path'),
    );
    expect(parameters.length).toBeGreaterThanOrEqual(3);
    for (const parameter of parameters) {
      if (parameter.schema.type === 'integer') expect(parameter.example, parameter.name).toBe(1);
      else expect(parameter.example, parameter.name).toMatch(new RegExp(parameter.schema.pattern));
    }
  });
});

describe('for people reading /docs', () => {
  it('speaks of beta and experimental operations, gives the sunset as a date, and says why GET /store/orders has no Try it out', () => {
    expect(doc.info.description).toMatch(/\*\*beta\*\*.*\*\*experimental\*\*/);
    expect(doc.info.description).not.toContain('x-stability');
    expect(doc.servers[0].description).toBe(
      'The Petstore demo API this page belongs to: local by default, production when deployed',
    );
    const getPet = doc.paths['/pets/{petId}'].get;
    expect(getPet.description).toContain('from 2027-07-01 on');
    expect(getPet.description).not.toContain('T00:00:00');
    expect(doc.paths['/store/orders'].get.description).toMatch(/no "Try it out" here: .+/);
  });

  it('GET / answers an index of links and operations, with the headers, and counts nothing', async () => {
    const before = await t.app.inject({ url: '/pets', headers: { 'x-api-key': key } });
    const response = await t.app.inject({ url: '/', headers: { 'x-api-key': key } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['x-ratelimit-remaining']).toBe(before.headers['x-ratelimit-remaining']);
    const index = json(response);
    expect(index).toMatchObject({
      name: 'Petstore',
      docs: 'http://petstore.test/docs',
      openapi: { json: 'http://petstore.test/openapi.json', yaml: 'http://petstore.test/openapi.yaml' },
    });
    expect(index.operations.map((o: Json) => `${o.method} ${o.path}`).sort()).toEqual([...EXPECTED_OPERATIONS].sort());
    expect(index.operations.find((o: Json) => o.operationId === 'getPet')).toMatchObject({ deprecated: true });
    expect(index.operations.find((o: Json) => o.operationId === 'listPets')).toMatchObject({ stability: 'beta' });
  });
});
