import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { Db } from './database.js';

/**
 * A query Kysely builds and compiles once per dialect, then runs with each call's arguments. Kysely
 * builds every query anew (its builder copies and freezes a tree of nodes, its compiler walks it):
 * for placing an order that took about as long as SQLite's own insert (perf: 9 % of the event loop
 * against 10.5 %); compiled once, `POST /store/orders` answered 20 % more requests, by turns.
 *
 * `build` writes the query as usual, with every value taken from `args` (a constant would be an
 * argument too). It runs once per dialect, with each argument standing for itself: the compiled
 * query's parameters are then matched to the arguments' names, and each call sends the same text
 * with its own values. The statement itself is prepared once as well (./database.ts).
 */
export function prepared<Args extends Record<string, unknown>, Row>(
  build: (db: Db, args: Args) => Compilable<Row>,
): (db: Db, args: Args) => Promise<QueryResult<Row>> {
  // By the dialect's adapter: a transaction or a held connection compiles as its database does.
  const compiled = new WeakMap<object, { query: CompiledQuery<Row>; names: (keyof Args)[] }>();
  return (db, args) => {
    const adapter = db.getExecutor().adapter;
    let known = compiled.get(adapter);
    if (known === undefined) {
      known = compile(db, build);
      compiled.set(adapter, known);
    }
    const { query, names } = known;
    return db.executeQuery({ ...query, parameters: names.map((name) => args[name]) });
  };
}

function compile<Args extends Record<string, unknown>, Row>(db: Db, build: (db: Db, args: Args) => Compilable<Row>) {
  const standIns = new Map<unknown, keyof Args>();
  const args = new Proxy({} as Args, {
    get(_, name) {
      const standIn = Object.freeze({ argument: name });
      standIns.set(standIn, name as keyof Args);
      return standIn;
    },
  });
  const query = build(db, args).compile();
  const names = query.parameters.map((parameter) => {
    const name = standIns.get(parameter);
    if (name === undefined) throw new Error(`prepared: a value of "${query.sql}" is not one of its arguments`);
    return name;
  });
  return { query, names };
}
