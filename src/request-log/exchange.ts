import type { LogEntry } from './entry.js';
import { keptBody, redacted, redactedHeaders } from './redact.js';

type Headers = Readonly<Record<string, string | string[] | number | undefined>>;

/**
 * An exchange as the request log's stage hands it over (./stage.ts): what was sent and what came back, as they were,
 * held by reference. It becomes an entry, its credentials cut and its bodies bounded, only when it is read or
 * written to the store (`entryOf`): a test key's request pays for an object, not for the work.
 */
export interface Exchange {
  requestId: string;
  /** When it arrived: real time, and the key's time. */
  real: number;
  key: number;
  method: string;
  url: string;
  path: string;
  requestHeaders: Headers;
  requestBody: string | undefined;
  status: number | null;
  responseHeaders: Headers;
  responseBody: string | undefined;
  ms: number;
  ending: LogEntry['ending'];
  fault: { fault: string; by: string } | undefined;
  /** The report card's outcomes, as the grader made them (report-card/grade.ts), shared, never changed. */
  checks: readonly {
    id: LogEntry['checks'][number]['id'];
    outcome: LogEntry['checks'][number]['outcome'];
    detail?: string;
  }[];
}

/** An exchange as the log answers it: credentials cut (./redact.ts), bodies at most 16 KB. */
export function entryOf(exchange: Exchange): LogEntry {
  const request = exchange.requestBody === undefined ? undefined : keptBody(exchange.requestBody);
  const response = exchange.responseBody === undefined ? undefined : keptBody(exchange.responseBody);
  return {
    requestId: exchange.requestId,
    at: new Date(exchange.key).toISOString(),
    receivedAt: new Date(exchange.real).toISOString(),
    method: exchange.method,
    url: redacted(exchange.url),
    path: exchange.path,
    requestHeaders: redactedHeaders(exchange.requestHeaders),
    ...(request === undefined ? {} : { requestBody: request.text }),
    status: exchange.status,
    responseHeaders: redactedHeaders(exchange.responseHeaders),
    ...(response === undefined ? {} : { responseBody: response.text }),
    ...(request?.truncated || response?.truncated ? { truncated: true as const } : {}),
    ms: exchange.ms,
    ending: exchange.ending,
    ...(exchange.fault ? { fault: exchange.fault } : {}),
    checks: exchange.checks.map(({ id, outcome, detail }) =>
      detail === undefined ? { id, outcome } : { id, outcome, detail },
    ),
  };
}

/**
 * Roughly what an exchange keeps alive in memory, in bytes: its bodies and URL, and at a flat rate the rest (the
 * exchange, the request's headers and a copy of the answer's: two dozen small objects and their strings, reckoned
 * at 2.5 KB).
 */
export const sizeOf = (exchange: Exchange): number =>
  2_500 + (exchange.requestBody?.length ?? 0) + (exchange.responseBody?.length ?? 0) + exchange.url.length;
