import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

/** At most this many sets of shared schemas are remembered: an app has one or two. */
const MAX_SETS = 16;

/**
 * Fastify's own response serializers (fast-json-stringify), compiled once per response schema instead
 * of once per route and status: most of the routes' answers share a few schemas (every problem
 * status of every operation is one of them), so an app compiles a few dozen serializers, not one per
 * route and status, and starts sooner (docs/performance.md#starting). What a serializer writes depends only on its
 * schema's content, the shared schemas it may refer to and the options, so serializers are kept by those contents
 * (Fastify hands each app a copy of its shared schemas, and routes build their schemas as they are registered): an
 * app built again in the same process, as the suites do, compiles nothing it compiled before.
 */
export function sharedSerializers(): SerializerFactory {
  return (externalSchemas, options) => {
    const key = JSON.stringify([externalSchemas, options ?? null]);
    let set = sets.get(key);
    if (!set) {
      if (sets.size >= MAX_SETS) sets.delete(sets.keys().next().value!);
      set = { compile: compilerFor(externalSchemas, options), byContent: new Map(), compiled: new WeakMap() };
      sets.set(key, set);
    }
    const { compile, byContent, compiled } = set;
    return (route) => {
      const schema = route.schema;
      if (typeof schema !== 'object' || schema === null) return compile(route);
      let serializer = compiled.get(schema);
      if (serializer) return serializer;
      // Routes build their response schemas as they are registered: another app's are equal, not the same.
      const content = JSON.stringify(schema);
      serializer = byContent.get(content) ?? compile(route);
      byContent.set(content, serializer);
      compiled.set(schema, serializer);
      return serializer;
    };
  };
}

const compilerFor = SerializerSelector();
const sets = new Map<
  string,
  { compile: ReturnType<SerializerFactory>; byContent: Map<string, Serializer>; compiled: WeakMap<object, Serializer> }
>();
