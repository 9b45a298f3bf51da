/**
 * The deprecation rules of `GET /pets/{petId}`: the headers every response of the operation carries
 * (RFC 9745 `Deprecation`, RFC 8594 `Sunset`, and `Link`s to the page that explains them), and the
 * instant from which it answers `410`. Pure: the dates come from configuration, the time from the clock.
 */
import { fieldNames } from '../http/field-name.js';
export interface Deprecation {
  deprecatedAt: Date;
  sunsetAt: Date;
}

export const DEPRECATIONS_PAGE_PATH = '/docs/deprecations';

export const DEPRECATION_HEADER = 'Deprecation';
export const SUNSET_HEADER = 'Sunset';
export const LINK_HEADER = 'Link';

/** A deprecation with the page that explains it (a path of the public listener). */
export interface Notice extends Deprecation {
  page: string;
}

/**
 * The headers of a response that several deprecations apply to (an operation's, its version's): the
 * earliest `Deprecation` and `Sunset` win, and `Link` names each page once.
 */
export function noticeHeaders(notices: readonly Notice[], publicUrl: string): Record<string, string> {
  const earliest = (dates: Date[]) => new Date(Math.min(...dates.map((date) => date.getTime())));
  const pages = [...new Set(notices.map((notice) => `${publicUrl}${notice.page}`))];
  return fieldNames({
    [DEPRECATION_HEADER]: `@${Math.floor(earliest(notices.map((n) => n.deprecatedAt)).getTime() / 1000)}`,
    [SUNSET_HEADER]: earliest(notices.map((n) => n.sunsetAt)).toUTCString(),
    [LINK_HEADER]: pages.map((page) => `<${page}>; rel="deprecation"; type="text/html", <${page}>; rel="sunset"; type="text/html"`).join(', '),
  });
}

export function deprecationHeaders(d: Deprecation, publicUrl: string): Record<string, string> {
  return noticeHeaders([{ ...d, page: DEPRECATIONS_PAGE_PATH }], publicUrl);
}

export function isSunset(d: Deprecation, now: number): boolean {
  return now >= d.sunsetAt.getTime();
}

/** An instant as people read it: `2027-07-01` at midnight UTC, else `2027-07-01 12:30 UTC` (seconds if any). */
export function dayOrInstant(date: Date): string {
  const iso = date.toISOString();
  if (iso.endsWith('T00:00:00.000Z')) return iso.slice(0, 10);
  const time = iso.endsWith(':00.000Z') ? iso.slice(11, 16) : iso.slice(11, 19);
  return `${iso.slice(0, 10)} ${time} UTC`;
}

/** `YYYY-MM-DD`, the form of `x-deprecated-sunset` in the OpenAPI document. */
export function sunsetDay(d: Deprecation): string {
  return d.sunsetAt.toISOString().slice(0, 10);
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
