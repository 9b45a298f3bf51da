import type { ColumnDefinitionBuilder, CreateTableBuilder } from 'kysely';
import type { DatabaseConfig } from './database.js';

/** What the migrations (./migrations.ts and the groups beside it) share: their dialect, and one helper. */

export type Kind = DatabaseConfig['kind'];

/** Adds columns that must hold a value, in the order given. */
export function required(columns: Record<string, 'text' | 'integer'>) {
  return <T extends string, C extends string>(table: CreateTableBuilder<T, C>): CreateTableBuilder<T, string> =>
    Object.entries(columns).reduce<CreateTableBuilder<T, string>>(
      (built, [name, type]) => built.addColumn(name, type, (c) => c.notNull()),
      table,
    );
}

/**
 * What a migration needs to know of its dialect: the one place
 * the dialects differ, how an integer key generates itself.
 */
export interface Dialect {
  kind: Kind;
  serialId: 'bigserial' | 'integer';
  serialKey: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
}

export function dialectOf(kind: Kind): Dialect {
  return {
    kind,
    serialId: kind === 'postgres' ? 'bigserial' : 'integer',
    serialKey: (c) => (kind === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()),
  };
}
