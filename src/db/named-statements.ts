import { createHash } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/**
 * At most this many statements are named; beyond, queries go unnamed
 * (a shape built per request would otherwise grow every connection).
 */
const MAX_NAMED = 500;

/**
 * The pool Kysely's PostgresDialect is given (its documented `PostgresPool`), over `pg`'s: each single
 * select, insert, update or delete goes to `pg` as a named statement (`{ name, text, values }`, pg's
 * documented prepared statements), so that PostgreSQL parses and plans it once per connection rather
 * than at every execution, as it does for the unnamed statements `pg` sends by default. The name is a
 * digest of the text, so one text always has one name. Anything else (a transaction's `begin`, a
 * migration's several commands) goes as it came.
 */
export function namedStatementsPool(pool: pg.Pool): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const names = new Map<string, string | null>();

  function nameOf(text: string): string | null {
    let name = names.get(text);
    if (name !== undefined) return name;
    // Once full, what is not known goes unnamed and is not remembered either: the map stays bounded.
    if (names.size >= MAX_NAMED) return null;
    name =
      PREPARABLE.test(text) && !text.includes(';') ? `k${createHash('sha1').update(text).digest('base64url')}` : null;
    names.set(text, name);
    return name;
  }

  function wrap(client: pg.PoolClient): PostgresPoolClient {
    return {
      query: ((textOrCursor: string | object, values?: readonly unknown[]) => {
        if (typeof textOrCursor !== 'string') return client.query(textOrCursor as never);
        const name = nameOf(textOrCursor);
        return name === null
          ? client.query(textOrCursor, values as unknown[])
          : client.query({ name, text: textOrCursor, values: values as unknown[] });
      }) as unknown as PostgresPoolClient['query'],
      release: () => client.release(),
    };
  }

  return {
    async connect() {
      const client = await pool.connect();
      let wrapped = clients.get(client);
      if (wrapped === undefined) clients.set(client, (wrapped = wrap(client)));
      return wrapped;
    },
    end: () => pool.end(),
  };
}

/** What Kysely compiles a query builder's select, insert, update or delete to. */
const PREPARABLE = /^(select|insert|update|delete|with) /;
