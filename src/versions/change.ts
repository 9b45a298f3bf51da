/**
 * One version's breaking changes, as Stripe's "version change" modules: what the version changed in
 * the records of answers, and how to turn a record of its shape back into the shape of the version
 * before it. The newest version is the code's own shape; an older version's answers are the newest's
 * with each later version's change undone, newest first (./shape.ts). Requests are the same in every
 * version (docs/versions.md: today's requests stay valid).
 */
export interface VersionChange {
  /** The version that made the change, `YYYY-MM-DD`. */
  version: string;
  /** The changelog's entries: each change and why it was made. */
  changes: ReadonlyArray<{ summary: string; reason: string }>;
  /** Per named schema whose records changed: a record of this version's shape → the version before's. */
  records: Readonly<Record<string, (record: JsonRecord) => JsonRecord>>;
  /** The same change on the document: per named schema, this version's JSON Schema → the version before's. */
  schemas: Readonly<Record<string, (schema: JsonSchema) => JsonSchema>>;
}

export type JsonRecord = Record<string, unknown>;

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  [member: string]: unknown;
}
