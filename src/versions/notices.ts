import { type Notice, noticeHeaders } from '../deprecation/notices.js';
import { OLDEST_VERSION, VERSIONS } from './versions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An operation's own deprecation: its headers, merged with its version's (below). */
    deprecation?: Notice;
  }
}

/** Where the versions and their changes are explained: the changelog, and the `Link` of a deprecated version. */
export const VERSIONS_PAGE_PATH = '/docs/versions';

/**
 * The oldest version's deprecation (docs/versions.md): deprecated since the next version was made, until
 * its sunset (OLDEST_VERSION_SUNSET_AT). The other versions are current.
 */
export function oldestVersionNotice(sunsetAt: Date): Notice {
  return { deprecatedAt: new Date(`${VERSIONS[1]}T00:00:00Z`), sunsetAt, page: VERSIONS_PAGE_PATH };
}

/** The notice a version's responses carry; none for a current version. */
export function noticeOf(version: string, oldest: Notice): Notice | undefined {
  return version === OLDEST_VERSION ? oldest : undefined;
}

const NONE: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The deprecation headers of a response: its version's notice and its operation's own, merged where
 * both apply (the earlier instants win, `Link` names both pages). Worked out once per pair.
 */
export class VersionNotices {
  readonly #headers = new Map<Notice | undefined, Map<string, Readonly<Record<string, string>>>>();

  constructor(
    readonly oldest: Notice,
    private readonly publicUrl: string,
  ) {}

  headers(version: string, own?: Notice): Readonly<Record<string, string>> {
    let byVersion = this.#headers.get(own);
    if (!byVersion) this.#headers.set(own, (byVersion = new Map()));
    let headers = byVersion.get(version);
    if (headers === undefined) {
      const notices = [own, noticeOf(version, this.oldest)].filter((notice) => notice !== undefined);
      byVersion.set(version, (headers = notices.length > 0 ? noticeHeaders(notices, this.publicUrl) : NONE));
    }
    return headers;
  }
}
