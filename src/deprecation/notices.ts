/**
 * Deprecation and sunset notices (RFC 9745 `Deprecation`, RFC 8594 `Sunset`, and `Link`s to the page
 * that explains them): what an operation's deprecation (pets/) and a version's (versions/) both say on
 * every response, and the instant from which they refuse. Pure: the dates come from configuration,
 * the time from the clock.
 */
import { fieldNames } from '../http/field-name.js';

export interface Deprecation {
  deprecatedAt: Date;
  sunsetAt: Date;
}

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
    [LINK_HEADER]: pages
      .map((page) => `<${page}>; rel="deprecation"; type="text/html", <${page}>; rel="sunset"; type="text/html"`)
      .join(', '),
  });
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
