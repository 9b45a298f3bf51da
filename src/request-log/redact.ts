/**
 * What a request log entry may show of a credential (docs/request-log.md#credentials): its first 8 characters and
 * `…`. Headers that carry credentials are cut whole; everywhere else (other headers, the URL, bodies) anything shaped
 * like a credential of this API is: a key (`pet_…`, a client secret, a child key), an access token (a JWT), a webhook
 * secret (`whsec_…`). Pure.
 */

const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'x-api-key',
  'authorization',
  'proxy-authorization',
  'cookie',
]);
const CREDENTIALS =
  /pet_[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/=_-]{8,}|eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
/** How much of a body is kept. */
export const MAX_BODY_BYTES = 16 * 1024;

const shown = (secret: string) => `${secret.slice(0, 8)}…`;

/** Whether `text` may hold a credential: a test of three substrings, before any regular expression runs. */
const mayHold = (text: string) => text.includes('pet_') || text.includes('whsec_') || text.includes('eyJ');

/** `text` with every credential in it cut to its first 8 characters. */
export function redacted(text: string): string {
  return mayHold(text) ? text.replace(CREDENTIALS, shown) : text;
}

/** Headers as a log entry shows them: names in lower case, values as strings, credentials cut. */
export function redactedHeaders(
  headers: Readonly<Record<string, string | string[] | number | undefined>>,
): Record<string, string> {
  const shownHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    const lower = name.toLowerCase();
    shownHeaders[lower] = CREDENTIAL_HEADERS.has(lower) ? shown(text) : redacted(text);
  }
  return shownHeaders;
}

/** A body as an entry keeps it: credentials cut, then at most 16 KB (cut on a character, said by `truncated`). */
export function keptBody(text: string): { text: string; truncated: boolean } {
  const safe = redacted(text);
  if (Buffer.byteLength(safe) <= MAX_BODY_BYTES) return { text: safe, truncated: false };
  let cut = Buffer.from(safe).subarray(0, MAX_BODY_BYTES).toString('utf8');
  // A character cut in two decodes as U+FFFD: drop it.
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return { text: cut, truncated: true };
}
