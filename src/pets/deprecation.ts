/**
 * The deprecation of `GET /pets/{petId}`: its notice's page, and what that page says. The notice's
 * headers and its sunset are the deprecation's rules (deprecation/notices.ts).
 */
import { type Deprecation, dayOrInstant, type Notice } from '../deprecation/notices.js';

export const DEPRECATIONS_PAGE_PATH = '/docs/deprecations';

/** The operation's deprecation, with the page that explains it. */
export function noticeOf(deprecation: Deprecation): Notice {
  return { ...deprecation, page: DEPRECATIONS_PAGE_PATH };
}

/** The page both `Link` relations point at. */
export function deprecationsPage(d: Deprecation): { title: string; body: string } {
  return {
    title: 'Deprecations',
    body: `<h2 id="get-pet"><code>GET /pets/{petId}</code></h2>
<p>Deprecated since ${dayOrInstant(d.deprecatedAt)} (<code>Deprecation</code> header, RFC 9745).
From ${dayOrInstant(d.sunsetAt)} (<code>Sunset</code> header, RFC 8594) it answers <code>410 Gone</code> with a problem of type <code>sunset</code>.</p>
<p>There is no one-for-one replacement: every pet stays readable in the listing <code>GET /pets</code>.</p>`,
  };
}
