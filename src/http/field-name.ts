/**
 * A header's name as an answer is given it: in lower case, as Fastify keeps every name (it lowers
 * each one it is given, at every answer), and made a property key once. A name lowered at each answer
 * is a fresh string that V8 looks up in its table of property names before it can be a key; a name
 * already lowered and already a key costs neither (docs/performance.md#every-request-through-fastify).
 */
export function fieldName(name: string): string {
  return Object.keys({ [name.toLowerCase()]: true })[0]!;
}

/** `headers` with each name as `fieldName` gives it. */
export function fieldNames(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [fieldName(name), value]));
}
