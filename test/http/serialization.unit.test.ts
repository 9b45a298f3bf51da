import { describe, expect, it } from 'vitest';
import { sharedSerializers } from '../../src/http/serialization.js';

const route = (schema: unknown, url = '/pets', httpStatus = '200') => ({ method: 'GET', url, httpStatus, schema });

describe('response serializers, compiled once per schema', () => {
  const Pet = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } };

  it('gives every route and status that answers with one schema the same serializer, which writes only what the schema names', () => {
    const compile = sharedSerializers()({}, {});
    const serializer = compile(route(Pet));
    expect(compile(route(Pet, '/pets/{petId}', '404'))).toBe(serializer);
    expect(serializer({ id: 1, name: 'Rex', secret: 'x' })).toBe('{"id":1,"name":"Rex"}');
    // A schema of another content is compiled on its own.
    const named = compile(route({ ...Pet, properties: { name: { type: 'string' } } }));
    expect(named).not.toBe(serializer);
    expect(named({ id: 1, name: 'Rex' })).toBe('{"name":"Rex"}');
  });

  it('gives an app built again the serializers compiled for the first: equal schemas, equal shared schemas (copies, as Fastify hands each app)', () => {
    const shared = () => ({ Named: { $id: 'Named', type: 'object', properties: { a: { type: 'string' } } } });
    const first = sharedSerializers()(shared(), {})(route({ ...Pet }));
    expect(sharedSerializers()(shared(), {})(route({ ...Pet }))).toBe(first);
    // Other options are another compilation.
    expect(sharedSerializers()(shared(), { rounding: 'floor' })(route({ ...Pet }))).not.toBe(first);
  });

  it('compiles again for another set of shared schemas, resolving references against that set', () => {
    const factory = sharedSerializers();
    const Ref = { $ref: 'Named#' };
    const one = factory(
      { Named: { $id: 'Named', type: 'object', properties: { a: { type: 'string' } } } },
      {},
    )(route(Ref));
    const other = factory(
      { Named: { $id: 'Named', type: 'object', properties: { b: { type: 'string' } } } },
      {},
    )(route(Ref));
    expect(one).not.toBe(other);
    expect(one({ a: 'x', b: 'y' })).toBe('{"a":"x"}');
    expect(other({ a: 'x', b: 'y' })).toBe('{"b":"y"}');
  });
});
