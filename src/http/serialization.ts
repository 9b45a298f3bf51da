import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

/**
 * Fastify's own response serializers (fast-json-stringify), compiled once per response schema instead
 * of once per route and status: most of the routes' answers share a few schemas (every problem
 * status of every operation is one of them), so an app compiles about 40 serializers, not 230, and
 * starts that much sooner. What a serializer writes depends only on its schema and the shared schemas
 * it may refer to, and Fastify asks this factory again for any set of shared schemas it builds, so a
 * serializer is shared only where it would have been compiled the same.
 */
export function sharedSerializers(): SerializerFactory {
  const compilerFor = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = compilerFor(externalSchemas, options);
    const compiled = new WeakMap<object, Serializer>();
    return (route) => {
      const schema = route.schema;
      if (typeof schema !== 'object' || schema === null) return compile(route);
      const known = compiled.get(schema);
      if (known) return known;
      const serializer = compile(route);
      compiled.set(schema, serializer);
      return serializer;
    };
  };
}
