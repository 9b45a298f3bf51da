import { Command, InvalidArgumentError } from 'commander';
import type { ReportCard } from './schemas.js';

export interface ReportCardCliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** The command's exit code: 1 when a check failed, 2 when no card was read. */
  exit: (code: number) => void;
  /** Default: the built-in `fetch`. */
  fetch?: typeof fetch;
}

/** How long the service has to answer. */
const TIMEOUT_MS = 15_000;

/**
 * `petstore report-card --url … --key …`: a test key's report card
 * (docs/testing-clients.md#is-my-client-a-good-api-citizen), read over HTTP as any client of the service would
 * (`GET /report-card`), for a person or a client's CI: a line per check, the latest failure under a failed one; exit
 * code 1 when a check failed, 0 otherwise, 2 when no card could be read. The key is sent, never printed.
 */
export function reportCardCommand(io: ReportCardCliIo): Command {
  return new Command('report-card')
    .description(
      "a test key's report card, read from a running service: how its client behaved, check by check (exit code 1 " +
        'when a check failed)',
    )
    .requiredOption('--url <url>', 'the service, e.g. http://localhost:8080', baseUrl)
    .requiredOption('--key <key>', 'the test key (pet_test_…) whose card to read')
    .option('--json', 'print the card as JSON, as the service answered it')
    .action(async (o: { url: string; key: string; json?: boolean }) => {
      const read = await cardOf(o.url, o.key, io.fetch ?? fetch);
      if (typeof read === 'string') {
        // One line, with the key taken out of anything the service or the network said.
        io.err(`petstore: ${read.split(o.key).join('pet_…')}`);
        return io.exit(2);
      }
      io.out(o.json ? JSON.stringify(read, null, 2) : describe(read));
      io.exit(read.checks.some((check) => check.status === 'failed') ? 1 : 0);
    });
}

/** The card, or why there is none, in words. */
async function cardOf(url: string, key: string, fetchCard: typeof fetch): Promise<ReportCard | string> {
  let answer: Response;
  try {
    answer = await fetchCard(`${url}/report-card`, {
      headers: { 'x-api-key': key, accept: 'application/json' },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    const timedOut = error instanceof Error && error.name === 'TimeoutError';
    return timedOut
      ? `no answer from ${url} within ${TIMEOUT_MS / 1000} s`
      : `could not reach ${url}: ${reason(error)}`;
  }
  const body: unknown = await answer.json().catch(() => undefined);
  if (answer.status !== 200) {
    const problem = (body ?? {}) as { code?: string; detail?: string };
    const retry = answer.status === 429 ? `; retry after ${answer.headers.get('retry-after') ?? 'a while'} s` : '';
    const said = problem.code ? ` ${problem.code}${problem.detail ? `: ${oneLine(problem.detail)}` : ''}` : '';
    return `${url} answered ${answer.status}${said}${retry}`;
  }
  if (!isCard(body)) return `${url} did not answer a report card: is it the Petstore service?`;
  return body;
}

/** The card for a person: a line per check, with the latest failure (and its exchange's URL) under a failed one. */
function describe(card: ReportCard): string {
  const counts = card.checks.map((check) => `${check.seen}/${check.failed}`);
  const width = Math.max('seen/failed'.length, ...counts.map((count) => count.length));
  const lines = [
    `Report card of the key since ${card.since}: ${card.requests} request${card.requests === 1 ? '' : 's'} graded`,
    '',
  ];
  lines.push(`${'status'.padEnd(9)}${'seen/failed'.padStart(width)}  check`);
  card.checks.forEach((check, i) => {
    lines.push(`${check.status.padEnd(9)}${counts[i]!.padStart(width)}  ${check.title} (${check.id})`);
    const latest = check.failures[0];
    const indent = ' '.repeat(9 + width + 2);
    if (check.status === 'failed' && latest) {
      lines.push(`${indent}latest: ${oneLine(latest.detail)} (request ${latest.requestId}, at ${latest.at})`);
      // The exchange itself, while the request log holds it (`--key` reads it).
      if (latest.log) lines.push(`${indent}exchange: ${latest.log}`);
    }
    if (check.status === 'failed') lines.push(`${indent}${oneLine(check.advice)} See ${check.docs}`);
  });
  const failed = card.checks.filter((check) => check.status === 'failed').length;
  const untested = card.checks.filter((check) => check.status === 'untested').length;
  lines.push(
    '',
    failed > 0
      ? `${failed} of ${card.checks.length} checks failed.`
      : `No check failed${untested > 0 ? ` (${untested} untested: their situations have not arisen)` : ''}.`,
  );
  return lines.join('\n');
}

function isCard(body: unknown): body is ReportCard {
  const card = body as Partial<ReportCard> | undefined;
  return (
    typeof card === 'object' &&
    card !== null &&
    typeof card.since === 'string' &&
    typeof card.requests === 'number' &&
    Array.isArray(card.checks)
  );
}

/** A service's base URL, as an option gives it: http(s), no credentials, query or fragment, no trailing slash. */
export function baseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected a URL, e.g. http://localhost:8080');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('expected an http: or https: URL');
  if (url.username || url.password || url.search || url.hash)
    throw new InvalidArgumentError('expected the service’s base URL, without credentials, query or fragment');
  return url.href.replace(/\/+$/, '');
}

/** What went wrong on the way, from the error and its causes: `ECONNREFUSED 127.0.0.1:9`. */
function reason(error: unknown): string {
  const parts: string[] = [];
  for (let e = error; e instanceof Error && parts.length < 3; e = e.cause) {
    const code = (e as { code?: string }).code;
    parts.push(code && !e.message.includes(code) ? `${code} ${e.message}` : e.message);
  }
  return oneLine(parts.at(-1) ?? String(error));
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
