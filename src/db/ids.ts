/**
 * Ids are int64 in the API, but the store only ever issues ids below 2^53, and a larger one does not
 * survive as a JavaScript number: it names no record. Asking the database would fail on PostgreSQL
 * (the rounded value overflows bigint), so repositories answer "none" without asking.
 */
export function canExist(id: number): boolean {
  return Number.isSafeInteger(id) && id > 0;
}
