import { STATUS_CODES } from 'node:http';
import type { LogEntry } from './entry.js';

/**
 * A selection of the request log as HAR 1.2 (docs/request-log.md#har): what browsers' developer tools and API clients
 * import. An exchange with no answer (a reset, a cut) has status `0`, as browsers write it. Credentials are cut as in
 * the entries (./redact.ts): a HAR carries nothing the log does not.
 */
export function harOf(entries: readonly LogEntry[], publicUrl: string, version: string) {
  return {
    log: {
      version: '1.2',
      creator: { name: 'petstore', version },
      pages: [],
      // Oldest first, as HAR writes them (a replaying reader takes the first entry of a URL).
      entries: entries.map((entry) => harEntry(entry, publicUrl)).reverse(),
    },
  };
}

const pairs = (headers: Record<string, string>) => Object.entries(headers).map(([name, value]) => ({ name, value }));

function harEntry(entry: LogEntry, publicUrl: string) {
  const url = new URL(entry.url, publicUrl);
  const requestType = entry.requestHeaders['content-type'] ?? 'application/octet-stream';
  const responseType = entry.responseHeaders['content-type'] ?? '';
  const status = entry.status ?? 0;
  return {
    startedDateTime: entry.receivedAt,
    time: entry.ms,
    request: {
      method: entry.method,
      url: url.href,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: pairs(entry.requestHeaders),
      queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
      ...(entry.requestBody === undefined ? {} : { postData: { mimeType: requestType, text: entry.requestBody } }),
      headersSize: -1,
      bodySize: entry.requestBody === undefined ? 0 : Buffer.byteLength(entry.requestBody),
    },
    response: {
      status,
      statusText: (status && STATUS_CODES[status]) || '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: pairs(entry.responseHeaders),
      content: {
        size: entry.responseBody === undefined ? 0 : Buffer.byteLength(entry.responseBody),
        mimeType: responseType,
        ...(entry.responseBody === undefined ? {} : { text: entry.responseBody }),
      },
      redirectURL: entry.responseHeaders.location ?? '',
      headersSize: -1,
      bodySize: entry.responseBody === undefined ? 0 : Buffer.byteLength(entry.responseBody),
    },
    cache: {},
    timings: { send: 0, wait: entry.ms, receive: 0 },
    comment: `${entry.requestId}: ${entry.ending}${entry.fault ? `, ${entry.fault.fault} injected by ${entry.fault.by}` : ''}`,
  };
}
