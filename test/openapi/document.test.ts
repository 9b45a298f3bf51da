/**
 * The OpenAPI document the app serves, as JSON and as YAML: its operations, webhooks, tags,
 * extensions, security, responses and records. (The document against the routes, and as its
 * readers take it: document-readers.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { json, type TestApp, testApp } from '../helpers/app.js';
import { headerSpelling } from '../../src/openapi/header-names.js';
import { EXPECTED_OPERATIONS, type Json, operationsOf, RATE_LIMIT_HEADERS } from '../helpers/openapi.js';
import { NEWEST_VERSION, OLDEST_VERSION } from '../../src/versions/versions.js';

let t: TestApp;
let doc: Json;

beforeAll(async () => {
  t = await testApp();
  const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  doc = json(response);
});
afterAll(async () => {
  await t.close();
});

const operation = (name: string): Json => operationsOf(doc).find((o) => `${o.method} ${o.path}` === name)?.op;

/** Follows a local `$ref` (`#/a/b/c`) through the document, however many times. */
function resolve(document: Json, value: Json): Json {
  let current = value;
  for (let depth = 0; current && typeof current.$ref === 'string'; depth++) {
    expect(depth).toBeLessThan(10);
    expect(current.$ref.startsWith('#/')).toBe(true);
    current = (current.$ref as string)
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((node: Json, part) => node?.[part], document);
    expect(current, `unresolvable ${value.$ref}`).toBeDefined();
  }
  return current;
}

describe('the served document', () => {
  it('is OpenAPI 3.1.0 as JSON', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([expect.objectContaining({ url: 'http://petstore.test' })]);
  });

  it('is the same object as YAML', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.yaml' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/yaml/);
    expect(parseYaml(response.body)).toEqual(doc);
  });

  it('documents exactly the forty-one operations', () => {
    expect(
      operationsOf(doc)
        .map((o) => `${o.method} ${o.path}`)
        .sort(),
    ).toEqual([...EXPECTED_OPERATIONS].sort());
  });

  it('mentions the plans and their numbers', () => {
    for (const text of ['free', 'pro', 'business', 'enterprise', '1,000', '10,000', '100,000'])
      expect(doc.info.description).toContain(text);
  });
});

describe('webhooks (OpenAPI 3.1)', () => {
  it('lists every event type, with the event as its payload and the Standard Webhooks headers', () => {
    const webhooks = doc.webhooks as Record<string, { post: Json }>;
    expect(Object.keys(webhooks).sort()).toEqual([
      'order.approved',
      'order.cancelled',
      'order.delivered',
      'order.placed',
      'webhook.test',
    ]);
    for (const [type, { post }] of Object.entries(webhooks)) {
      expect(post.requestBody.content['application/json'].schema.allOf).toEqual([
        { $ref: '#/components/schemas/Event' },
        { type: 'object', properties: { type: { const: type } } },
      ]);
      expect(post.parameters.map((p: Json) => p.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
    }
  });
});

describe('tags', () => {
  it('groups the tags as Pets, Store, Notifications and Account, both in x-tagGroups and with x-parent', () => {
    const groups = doc['x-tagGroups'] as Array<{ name: string; tags: string[] }>;
    expect(groups.map((g) => g.name)).toEqual(['Pets', 'Store', 'Notifications', 'Account']);
    const tags = doc.tags as Array<{ name: string; 'x-parent'?: string }>;
    const children = tags.filter((tag) => tag['x-parent'] !== undefined);
    expect(children.length).toBeGreaterThan(0);
    for (const child of children) {
      expect(['Pets', 'Store', 'Notifications', 'Account']).toContain(child['x-parent']);
      expect(groups.find((g) => g.name === child['x-parent'])?.tags).toContain(child.name);
    }
    for (const group of groups) {
      expect(tags.map((tag) => tag.name)).toContain(group.name);
      expect(group.tags.length).toBeGreaterThan(0);
      for (const name of group.tags) expect(children.find((c) => c.name === name)?.['x-parent']).toBe(group.name);
    }
  });

  it("puts only child tags on operations, Pets operations under Pets, Store ones under Store, events under Notifications, /usage and a test key's clock, data and report card under Account", () => {
    const parentOf = new Map(
      (doc.tags as Json[]).filter((tag) => tag['x-parent']).map((tag) => [tag.name, tag['x-parent']]),
    );
    const groupOf = (path: string) =>
      path.startsWith('/pets')
        ? 'Pets'
        : /^\/(usage|versions|test-|report-card|request-log|scenarios|oauth|\.well-known)/.test(path)
          ? 'Account'
          : /^\/(events|webhook-endpoints)/.test(path)
            ? 'Notifications'
            : 'Store';
    for (const { path, op } of operationsOf(doc)) {
      expect(op.tags.length).toBeGreaterThan(0);
      for (const tag of op.tags as string[]) expect(parentOf.get(tag)).toBe(groupOf(path));
    }
  });
});

describe('extensions', () => {
  it('marks x-stability beta, experimental, or nothing', () => {
    const expected: Record<string, string | undefined> = {
      'GET /pets': 'beta',
      'POST /store/orders': 'beta',
      'GET /store/orders/{orderId}': 'experimental',
      'DELETE /store/orders/{orderId}': 'experimental',
      'POST /store/orders/{orderId}/advance': 'experimental',
      'GET /events': 'beta',
      'GET /events/stream': 'beta',
      'GET /events/{eventId}': 'beta',
      ...Object.fromEntries(
        EXPECTED_OPERATIONS.filter((op) =>
          /\/(webhook-endpoints|test-|report-card|request-log|scenarios)/.test(op),
        ).map((op) => [op, 'experimental']),
      ),
      'GET /pets/{petId}': undefined,
      'GET /store/orders': undefined,
      'GET /usage': 'beta',
      'GET /versions': 'beta',
      'POST /oauth/token': 'beta',
      'GET /.well-known/oauth-authorization-server': 'beta',
      'GET /.well-known/jwks.json': 'beta',
    };
    for (const { method, path, op } of operationsOf(doc))
      expect(op['x-stability'], `${method} ${path}`).toBe(expected[`${method} ${path}`]);
  });

  it('hides the try-it panel on GET /store/orders and the event stream only', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      expect(op['x-hideTryItPanel'], `${method} ${path}`).toBe(
        ['GET /store/orders', 'GET /events/stream'].includes(`${method} ${path}`) ? true : undefined,
      );
    }
  });

  it('deprecates GET /pets/{petId} with the default sunset day, and nothing else', () => {
    expect(operation('GET /pets/{petId}').deprecated).toBe(true);
    expect(operation('GET /pets/{petId}')['x-deprecated-sunset']).toBe('2027-07-01');
    for (const { method, path, op } of operationsOf(doc).filter((o) => o.path !== '/pets/{petId}')) {
      expect(op.deprecated, `${method} ${path}`).toBeUndefined();
      expect(op['x-deprecated-sunset'], `${method} ${path}`).toBeUndefined();
    }
  });

  it('follows a configured PETS_GET_SUNSET_AT', async () => {
    const other = await testApp({
      env: { PETS_GET_DEPRECATED_AT: '2027-01-01T00:00:00Z', PETS_GET_SUNSET_AT: '2028-02-29T12:00:00Z' },
    });
    try {
      const document = json(await other.app.inject({ method: 'GET', url: '/openapi.json' }));
      const op = operationsOf(document).find((o) => o.method === 'GET' && o.path === '/pets/{petId}')?.op;
      expect(op.deprecated).toBe(true);
      expect(op['x-deprecated-sunset']).toBe('2028-02-29');
    } finally {
      await other.close();
    }
  });
});

describe('security', () => {
  it('declares an apiKey scheme in the X-API-Key header and OAuth 2.0 client credentials with their scopes, and requires either on every operation but what needs no key; the token endpoint takes HTTP Basic', () => {
    const schemes = doc.components.securitySchemes as Record<string, Json>;
    const apiKey = Object.entries(schemes).filter(
      ([, s]) => s.type === 'apiKey' && s.in === 'header' && s.name === 'X-API-Key',
    );
    expect(apiKey).toHaveLength(1);
    const [name] = apiKey[0]!;
    expect(schemes.OAuth2).toMatchObject({
      type: 'oauth2',
      flows: {
        clientCredentials: {
          tokenUrl: 'http://petstore.test/oauth/token',
          scopes: {
            'pets:read': expect.any(String),
            'orders:read': expect.any(String),
            'orders:write': expect.any(String),
            'webhooks:write': expect.any(String),
          },
        },
      },
    });
    expect(schemes.ClientCredentials).toMatchObject({ type: 'http', scheme: 'basic' });
    const scopeOf = (method: string, path: string) =>
      path.startsWith('/pets')
        ? 'pets:read'
        : path.startsWith('/webhook-endpoints')
          ? 'webhooks:write'
          : /^\/(store\/orders|events)/.test(path)
            ? method === 'GET'
              ? 'orders:read'
              : 'orders:write'
            : undefined;
    for (const { method, path, op } of operationsOf(doc)) {
      const security = (op.security ?? doc.security) as Json[];
      const open = path === '/versions' || path === '/scenarios' || path.startsWith('/.well-known/');
      const scope = scopeOf(method, path);
      const expected = open
        ? []
        : path === '/oauth/token'
          ? [{ ClientCredentials: [] }]
          : [{ [name]: [] }, { OAuth2: scope ? [scope] : [] }];
      expect(security, `${method} ${path}`).toEqual(expected);
      if (scope) expect(op.responses['403'], `${method} ${path}`).toBeDefined();
    }
  });
});

describe('responses', () => {
  it('declares the rate-limit headers on every response, resolvable through components.headers', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      for (const [status, raw] of Object.entries(op.responses as Record<string, Json>)) {
        const response = resolve(doc, raw);
        for (const header of RATE_LIMIT_HEADERS) {
          const where = `${method} ${path} ${status} ${header}`;
          const declared = response.headers?.[header];
          expect(declared, where).toBeDefined();
          expect(declared.$ref, where).toMatch(/^#\/components\/headers\//);
          const resolved = resolve(doc, declared);
          expect(resolved.schema?.type, where).toMatch(/^(integer|string)$/);
          expect(typeof resolved.description, where).toBe('string');
        }
      }
    }
  });

  it('declares Retry-After on every 429', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      const response = resolve(doc, op.responses['429']);
      const retryAfter = resolve(doc, response.headers?.['Retry-After']);
      expect(retryAfter?.schema?.type, `${method} ${path}`).toBe('integer');
    }
  });

  it('declares every 304 without content, as it is sent', () => {
    const notModified = operationsOf(doc).filter(({ op }) => op.responses['304']);
    expect(notModified.map(({ method, path }) => `${method} ${path}`)).toEqual(
      expect.arrayContaining(['GET /pets', 'GET /pets/{petId}', 'GET /store/orders', 'GET /store/orders/{orderId}']),
    );
    for (const { method, path, op } of notModified)
      expect(op.responses['304'].content, `${method} ${path}`).toBeUndefined();
  });

  it('declares Cache-Control: no-store on every 429', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      const response = resolve(doc, op.responses['429']);
      const cacheControl = resolve(doc, response.headers?.['Cache-Control']);
      expect(cacheControl?.schema?.const, `${method} ${path}`).toBe('no-store');
      expect(cacheControl?.required, `${method} ${path}`).toBe(true);
    }
  });

  it('gives Prefer no example, which Swagger UI would fill into Try it out: a test key would meet a fault unasked', () => {
    const prefer = Object.values<Json>(doc.components.parameters).find((parameter) => parameter.name === 'Prefer');
    expect(prefer).toBeDefined();
    expect([prefer!.example, prefer!.examples, prefer!.schema.example, prefer!.schema.examples]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('spells every header it names one way, as its RFC or draft does', () => {
    const named: Array<[string, string]> = [[doc.components.securitySchemes.ApiKey.name, 'the security scheme']];
    for (const name of Object.keys(doc.components.headers)) named.push([name, 'components.headers']);
    for (const parameter of Object.values<Json>(doc.components.parameters))
      if (parameter.in === 'header') named.push([parameter.name, 'components.parameters']);
    const operations = [
      ...operationsOf(doc),
      ...Object.entries<Json>(doc.webhooks).map(([event, entry]) => ({
        method: 'webhook',
        path: event,
        op: entry.post,
      })),
    ];
    for (const { method, path, op } of operations) {
      for (const parameter of op.parameters ?? [])
        if (parameter.in === 'header') named.push([parameter.name, `${method} ${path}`]);
      for (const [status, response] of Object.entries<Json>(op.responses ?? {}))
        for (const name of Object.keys(response.headers ?? {})) named.push([name, `${method} ${path} ${status}`]);
    }
    const spellings = new Set(named.map(([name]) => name));
    for (const [name, where] of named) expect(headerSpelling(name), `${name} (${where})`).toBe(name);
    // Each header one way: no two spellings of one name.
    expect(new Set([...spellings].map((name) => name.toLowerCase())).size).toBe(spellings.size);
    for (const name of [
      'ETag',
      'If-None-Match',
      'Idempotency-Key',
      'Idempotent-Replayed',
      'Location',
      'Prefer',
      'X-API-Key',
      'Last-Event-ID',
      'webhook-id',
    ])
      expect(spellings).toContain(name);
  });

  it('documents 400, 401, 429, 500 and 503 as application/problem+json on every operation that takes a key (OAuth errors on the token endpoint), 429 on what needs no key', () => {
    for (const { method, path, op } of operationsOf(doc)) {
      const open = path === '/versions' || path === '/scenarios' || path.startsWith('/.well-known/');
      const oauth = path === '/oauth/token';
      if (oauth)
        for (const status of ['400', '401'])
          expect(Object.keys(resolve(doc, op.responses[status]).content)).toEqual(['application/json']);
      for (const status of open ? ['429'] : oauth ? ['429', '500', '503'] : ['400', '401', '429', '500', '503']) {
        const response = resolve(doc, op.responses[status]);
        expect(response?.content?.['application/problem+json']?.schema, `${method} ${path} ${status}`).toBeDefined();
      }
    }
  });
});

describe('conflicts', () => {
  it('declares on each 409 only the conflicts its operation meets', () => {
    const schemaOf = (name: string): Json =>
      operation(name).responses['409'].content['application/problem+json'].schema;
    const conflictsOf = (name: string) =>
      ((schemaOf(name).anyOf ?? [schemaOf(name)]) as Json[]).map((one) => one.$ref.split('/').at(-1)).sort();
    expect(conflictsOf('POST /store/orders')).toEqual(['IdempotencyKeyInProgressProblem', 'PetNotAvailableProblem']);
    expect(conflictsOf('DELETE /store/orders/{orderId}')).toEqual(['OrderNotCancellableProblem']);
    expect(conflictsOf('POST /store/orders/{orderId}/advance')).toEqual([
      'IdempotencyKeyInProgressProblem',
      'OrderNotAdvanceableProblem',
    ]);
    expect(conflictsOf('POST /webhook-endpoints')).toEqual([
      'IdempotencyKeyInProgressProblem',
      'WebhookEndpointLimitProblem',
    ]);
    expect(conflictsOf('POST /webhook-endpoints/{endpointId}/test')).toEqual(['IdempotencyKeyInProgressProblem']);
  });
});

describe('records', () => {
  const schemaOf = (document: Json, name: string) => resolve(document, document.components.schemas[name]);

  it('has Pet and Order with the canonical fields in the first version, and as the newest changed them', async () => {
    const oldest = json(await t.app.inject({ url: `/openapi.json?version=${OLDEST_VERSION}` }));
    expect(oldest.info.version).toBe(OLDEST_VERSION);
    const pet = schemaOf(oldest, 'Pet');
    expect(Object.keys(pet.properties)).toEqual(['id', 'name', 'category', 'photoUrls', 'tags', 'status']);
    expect(pet.required).toEqual(['id', 'name', 'category', 'photoUrls', 'tags', 'status']);
    expect(pet.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(pet.properties.name.type).toBe('string');
    expect(Object.keys(resolve(oldest, pet.properties.category).properties).sort()).toEqual(['id', 'name']);
    expect(pet.properties.photoUrls).toMatchObject({ type: 'array', items: { type: 'string', format: 'uri' } });
    expect(pet.properties.tags.type).toBe('array');
    expect(Object.keys(resolve(oldest, pet.properties.tags.items).properties).sort()).toEqual(['id', 'name']);
    expect([...resolve(oldest, pet.properties.status).enum].sort()).toEqual(['available', 'pending', 'sold']);
    const order = schemaOf(oldest, 'Order');
    expect(Object.keys(order.properties)).toEqual(['id', 'petId', 'quantity', 'shipDate', 'status', 'complete']);
    expect(order.required).toContain('complete');
    expect(order.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(order.properties.petId).toMatchObject({ type: 'integer', format: 'int64' });
    expect(order.properties.quantity).toMatchObject({ type: 'integer', format: 'int32', minimum: 1 });
    expect(order.properties.shipDate).toMatchObject({ type: 'string', format: 'date-time' });
    expect([...resolve(oldest, order.properties.status).enum].sort()).toEqual([
      'approved',
      'cancelled',
      'delivered',
      'placed',
    ]);
    expect(order.properties.complete.type).toBe('boolean');

    expect(doc.info.version).toBe(NEWEST_VERSION);
    expect(Object.keys(schemaOf(doc, 'Pet').properties)).toEqual([
      'id',
      'name',
      'category',
      'photos',
      'tags',
      'status',
    ]);
    expect(schemaOf(doc, 'Pet').properties.photos.items).toMatchObject({
      type: 'object',
      properties: { url: { type: 'string', format: 'uri' } },
    });
    expect(Object.keys(schemaOf(doc, 'Order').properties)).toEqual(['id', 'petId', 'quantity', 'shipDate', 'status']);
  });
});
