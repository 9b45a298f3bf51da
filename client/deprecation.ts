/** `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and their `Link`: told once per operation, through a hook. */

export interface DeprecationNotice {
  /** The operationId, e.g. `getPet`. */
  operation: string;
  deprecation?: Date;
  /** From this instant the operation answers `410`. */
  sunset?: Date;
  /** The page that explains the deprecation. */
  link?: string;
}

export type DeprecationHook = (notice: DeprecationNotice) => void;

/** The default hook: one line on stderr. */
export const warnOnStderr: DeprecationHook = ({ operation, sunset, link }) => {
  const when = sunset ? `; it stops answering on ${sunset.toISOString()}` : '';
  console.warn(`petstore client: ${operation} is deprecated${when}${link ? ` (see ${link})` : ''}`);
};

export function deprecationOf(operation: string, headers: Headers): DeprecationNotice | undefined {
  const deprecation = headers.get('deprecation');
  const sunset = headers.get('sunset');
  if (deprecation === null && sunset === null) return undefined;
  const link = headers.get('link')?.match(/<([^>]*)>[^,]*rel="?deprecation"?/)?.[1];
  return { operation, deprecation: instantOf(deprecation), sunset: instantOf(sunset), link };
}

/** Calls the hook the first time each operation answers with deprecation headers. */
export function deprecationWatcher(hook: DeprecationHook): (operation: string, headers: Headers) => void {
  const told = new Set<string>();
  return (operation, headers) => {
    if (told.has(operation)) return;
    const notice = deprecationOf(operation, headers);
    if (!notice) return;
    told.add(operation);
    hook(notice);
  };
}

/** `@<unix seconds>` (RFC 9745) or an HTTP date (RFC 8594, and older drafts of `Deprecation`). */
function instantOf(value: string | null): Date | undefined {
  if (value === null) return undefined;
  const date = /^@-?\d+$/.test(value) ? new Date(Number(value.slice(1)) * 1000) : new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
