import { changesAfter, NEWEST_VERSION } from './versions.js';
import type { JsonRecord } from './change.js';

type Shaper = (value: unknown) => unknown;

/** A schema as the routes declare it (TypeBox's JSON Schema): what the walk below reads of it. */
interface Schema {
  $id?: string;
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  required?: string[];
}

/**
 * Answers in an older version: the newest version's answer, with every record of a schema a later
 * version changed turned back, newest change first (./change.ts). Where the records are is read from
 * the answer's schema, once per schema and version: a `$ref` to a named schema is a record of that
 * name; properties, array items and the alternatives of a union are walked (an alternative applies to
 * a value that holds all its required members). A record's own members are shaped before the record.
 */
export class Shapes {
  readonly #named: ReadonlyMap<string, Schema>;
  readonly #compiled = new Map<string, WeakMap<object, Shaper | null>>();
  readonly #records = new Map<string, Shaper | null>();

  constructor(named: readonly object[]) {
    this.#named = new Map((named as Schema[]).filter((schema) => schema.$id).map((schema) => [schema.$id!, schema]));
  }

  /** What turns an answer of `schema` in the newest version into `version`'s; undefined when nothing in it changed. */
  of(schema: object, version: string): Shaper | undefined {
    if (version === NEWEST_VERSION) return undefined;
    let byVersion = this.#compiled.get(version);
    if (!byVersion) this.#compiled.set(version, (byVersion = new WeakMap()));
    let shaper = byVersion.get(schema);
    if (shaper === undefined)
      byVersion.set(schema, (shaper = this.#compile(schema as Schema, version, new Set()) ?? null));
    return shaper ?? undefined;
  }

  /** A record of the named schema, shaped for `version`. */
  record(name: string, version: string): Shaper | undefined {
    if (version === NEWEST_VERSION) return undefined;
    const key = `${version} ${name}`;
    let shaper = this.#records.get(key);
    if (shaper === undefined) this.#records.set(key, (shaper = this.#compileRecord(name, version, new Set()) ?? null));
    return shaper ?? undefined;
  }

  #compile(schema: Schema, version: string, within: Set<string>): Shaper | undefined {
    if (schema.$ref !== undefined) return this.#compileRecord(nameOf(schema.$ref), version, within);
    if (schema.anyOf) return this.#compileUnion(schema.anyOf, version, within);
    if (schema.type === 'array' && schema.items) {
      const item = this.#compile(schema.items, version, within);
      return item && ((value) => (Array.isArray(value) ? value.map(item) : value));
    }
    if (schema.properties) {
      const members = Object.entries(schema.properties).flatMap(([name, member]) => {
        const shaper = this.#compile(member, version, within);
        return shaper ? [[name, shaper] as const] : [];
      });
      if (members.length === 0) return undefined;
      return (value) => {
        if (!isRecord(value)) return value;
        const shaped = { ...value };
        for (const [name, shaper] of members) if (name in shaped) shaped[name] = shaper(shaped[name]);
        return shaped;
      };
    }
    return undefined;
  }

  #compileRecord(name: string, version: string, within: Set<string>): Shaper | undefined {
    const schema = this.#named.get(name);
    if (!schema || within.has(name)) return undefined;
    const inner = this.#compile(schema, version, new Set(within).add(name));
    const own = changesAfter(version).flatMap((change) => change.records[name] ?? []);
    if (!inner && own.length === 0) return undefined;
    return (value) => {
      if (!isRecord(value)) return value;
      let shaped = (inner ? inner(value) : value) as JsonRecord;
      for (const undo of own) shaped = undo(shaped);
      return shaped;
    };
  }

  #compileUnion(alternatives: Schema[], version: string, within: Set<string>): Shaper | undefined {
    const shaped = alternatives.flatMap((alternative) => {
      const shaper = this.#compile(alternative, version, within);
      const resolved = alternative.$ref !== undefined ? this.#named.get(nameOf(alternative.$ref)) : alternative;
      return shaper ? [{ shaper, required: resolved?.required ?? [] }] : [];
    });
    if (shaped.length === 0) return undefined;
    return (value) => {
      if (!isRecord(value)) return value;
      const match = shaped.find(({ required }) => required.every((name) => name in value));
      return match ? match.shaper(value) : value;
    };
  }
}

/** `Pet#` (as the routes refer to it: http/schemas.ts) → `Pet`. */
function nameOf(ref: string): string {
  return ref.endsWith('#') ? ref.slice(0, -1) : ref;
}

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
