import { type Fault, isFault, MAX_LATENCY_MS } from './profile.js';

/** Where a test key asks for faults, and where the service says which it applied (RFC 7240). */
export const PREFER_HEADER = 'Prefer';
export const PREFERENCE_APPLIED_HEADER = 'Preference-Applied';

/** The preferences this service knows, as a request states them. */
export interface Preferences {
  /** `drop` ends an event stream after its next event: honoured by the stream alone. */
  fault?: Fault | 'drop';
  /** `fault=drop; events=<n>`: after its n-th event instead (1 to MAX_DROP_EVENTS). */
  dropAfter?: number;
  latencyMs?: number;
}

/**
 * The `Prefer` header's preferences this service knows: `fault=503|500|429|reset|drop` and
 * `latency=<milliseconds>` (0 to MAX_LATENCY_MS). As RFC 7240 says: names are case-insensitive, a
 * value may be quoted, parameters after `;` are ignored, the first of a repeated preference counts,
 * and a preference that is unknown or cannot be honoured is ignored (it is then not in
 * `Preference-Applied`). Several `Prefer` headers arrive joined with commas.
 */
export function parsePrefer(header: string | undefined): Preferences {
  const found: Preferences = {};
  if (!header) return found;
  const seen = new Set<string>();
  for (const part of splitOutsideQuotes(header, ',')) {
    const [preference = '', ...parameters] = splitOutsideQuotes(part, ';');
    const eq = preference.indexOf('=');
    const name = (eq < 0 ? preference : preference.slice(0, eq)).trim().toLowerCase();
    if (!name || seen.has(name)) continue;
    seen.add(name);
    const value = unquote(eq < 0 ? '' : preference.slice(eq + 1).trim());
    const fault = value.toLowerCase();
    if (name === 'fault' && (isFault(fault) || fault === 'drop')) {
      found.fault = fault as Fault | 'drop';
      const events = fault === 'drop' ? dropEventsOf(parameters) : undefined;
      if (events !== undefined) found.dropAfter = events;
    } else if (name === 'latency' && /^\d{1,5}$/.test(value) && Number(value) <= MAX_LATENCY_MS)
      found.latencyMs = Number(value);
  }
  return found;
}

/** The most events `fault=drop; events=<n>` lets a stream send before it is dropped. */
export const MAX_DROP_EVENTS = 10_000;

/** `events=<n>` among a `drop`'s parameters, if valid. */
function dropEventsOf(parameters: readonly string[]): number | undefined {
  for (const parameter of parameters) {
    const eq = parameter.indexOf('=');
    if (eq < 0 || parameter.slice(0, eq).trim().toLowerCase() !== 'events') continue;
    const value = unquote(parameter.slice(eq + 1).trim());
    return /^\d{1,5}$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_DROP_EVENTS
      ? Number(value)
      : undefined;
  }
  return undefined;
}

/** `Preference-Applied`'s value for what was applied, or undefined. */
export function appliedPreferences({ fault, latencyMs }: Preferences): string | undefined {
  const applied = [fault && `fault=${fault}`, latencyMs !== undefined && `latency=${latencyMs}`].filter(Boolean);
  return applied.length > 0 ? applied.join(', ') : undefined;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}

/** How the document describes `Prefer` (a parameter of every operation that counts) and `Preference-Applied`. */
export const PREFER_DESCRIPTION =
  `Test keys (\`pet_test_…\`) only; a live key's preferences are ignored. RFC 7240 preferences: \`fault=503\`, ` +
  `\`fault=500\`, \`fault=429\` or \`fault=reset\` make this request fail as the real failure would (a \`503\` ` +
  `with \`Retry-After\`; a \`500\`; a \`429\` with real headers and \`Retry-After\` that counts toward a ban; the ` +
  `request handled in full and its connection reset instead of answered); \`fault=drop\` ends an event stream ` +
  `(\`GET /events/stream\`) after its next event, as a proxy cutting it would (\`fault=drop; events=100\`: after ` +
  `its 100th); and \`latency=<ms>\` (0 to ` +
  `${MAX_LATENCY_MS}) delays it. Example: \`fault=503, latency=800\`. The faults that apply are named in ` +
  `\`${PREFERENCE_APPLIED_HEADER}\`.`;
export const PREFERENCE_APPLIED_DESCRIPTION =
  `The preferences of \`${PREFER_HEADER}\` this answer applied (test keys only), e.g. \`fault=503\`. Absent when ` +
  `none was.`;

/** The test keys in a paragraph, for the document's description. */
export const TEST_KEYS_IN_WORDS =
  `**Test keys.** A \`pet_test_…\` key has the same plans and limits and its own orders, and misbehaves on demand: ` +
  `send \`${PREFER_HEADER}: fault=503\` (or \`500\`, \`429\`, \`reset\`) or \`latency=800\`, and that request ` +
  `fails or waits as the real thing would, counted as the real thing would be; \`${PREFERENCE_APPLIED_HEADER}\` ` +
  `says what was applied. A test key may also carry a standing profile (a fault rate and a latency range, drawn ` +
  `from a seeded sequence so that a run can be replayed). Use them to prove a client's retries and backoff.`;
