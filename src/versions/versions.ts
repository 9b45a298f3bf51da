import { VERSION_2026_11_26 } from './2026-11-26.js';
import type { VersionChange } from './change.js';

/** The request and response header that names a version (docs/versions.md). */
export const VERSION_HEADER = 'Petstore-Version';
export const VERSION_FIELD = 'petstore-version';

/** What every version looks like, a date (`YYYY-MM-DD`): the schemas that name versions say so. */
export const VERSION_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

/** The first version: the classic Petstore records, as the service answered them before versions. */
export const OLDEST_VERSION = '2025-06-01';

/** Every version's change after the first, oldest first. A new version is one module more here. */
export const CHANGES: readonly VersionChange[] = [VERSION_2026_11_26];

/** Every version, oldest first. */
export const VERSIONS: readonly string[] = [OLDEST_VERSION, ...CHANGES.map((change) => change.version)];

/** The newest version: the code's own shape. */
export const NEWEST_VERSION = VERSIONS.at(-1)!;

const KNOWN = new Set(VERSIONS);

export function isVersion(text: unknown): text is string {
  return typeof text === 'string' && KNOWN.has(text);
}

/** The changes that lie between `version` and the newest, newest first: what an answer for `version` undoes. */
export function changesAfter(version: string): VersionChange[] {
  return CHANGES.filter((change) => change.version > version).reverse();
}
