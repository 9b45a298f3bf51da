import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { DatabaseConfig } from './database.js';
import type { Db } from './database.js';

/**
 * A query Kysely builds and compiles once per dialect (its documented `compile()`), then runs with
 * each call's arguments (`executeQuery`). Kysely builds every query anew: its builder copies and
 * freezes a tree of nodes, and its compiler walks it, which for the hottest write was a large share of its
 * cost (docs/performance.md#every-request-through-fastify, the order's insert compiled once).
 *
 * `build` writes the query as usual, with every value taken from `args` (a constant would be an
 * argument too), whose `names` are listed. It runs once per dialect with each argument standing for
 * itself, so the compiled query's parameters are matched to the names, and each call sends the same
 * text with its own values. The statement itself is prepared once as well (./database.ts).
 */
export function prepared<Args extends Record<string, unknown>, Row>(
  names: readonly (keyof Args & string)[],
  build: (db: Db, args: Args) => Compilable<Row>,
): (db: Db, kind: DatabaseConfig['kind'], args: Args) => Promise<QueryResult<Row>> {
  // By the store's kind, which the caller knows: a transaction compiles as its database does.
  const compiled = new Map<DatabaseConfig['kind'], { query: CompiledQuery<Row>; order: (keyof Args)[] }>();
  return (db, kind, args) => {
    let known = compiled.get(kind);
    if (known === undefined) {
      known = compile(db, names, build);
      compiled.set(kind, known);
    }
    const { query, order } = known;
    return db.executeQuery({ ...query, parameters: order.map((name) => args[name]) });
  };
}

function compile<Args extends Record<string, unknown>, Row>(
  db: Db,
  names: readonly (keyof Args & string)[],
  build: (db: Db, args: Args) => Compilable<Row>,
) {
  const standIns = new Map<unknown, keyof Args>(names.map((name) => [Object.freeze({ argument: name }), name]));
  const args = Object.fromEntries([...standIns].map(([standIn, name]) => [name, standIn])) as Args;
  const query = build(db, args).compile();
  const order = query.parameters.map((parameter) => {
    const name = standIns.get(parameter);
    if (name === undefined) throw new Error(`prepared: a value of "${query.sql}" is not one of its arguments`);
    return name;
  });
  return { query, order };
}
