import { fieldNames } from '../http/field-name.js';
import { PROBLEM_CONTENT_TYPE, ProblemError, problemBody } from '../http/problems.js';
import { CACHE_CONTROL_HEADER, NO_STORE } from '../http/responses.js';
import type { LabelValues } from 'prom-client';
import { type Policy, UNCOUNTED_POLICY } from './plans.js';
import type { Verdict } from './verdict.js';

/**
 * A refusal of the limiter, as the client gets it: a `429` whose problem body names what refused it (the
 * plan's window, the uncounted paths' throttle, a ban), and what the service notes of it (its metrics, and
 * the log line of the one that starts a ban).
 */

/**
 * The counters a refusal raises (the service's: ops/metrics.ts, counted by ops/tallies.ts), said as what the
 * limiter asks of them: ops/ lies above the limiter (its logger knows keys/, which know the limiter).
 */
export interface RefusalMetrics {
  refusals: CounterOf<'kind' | 'plan'>;
  bans: CounterOf<'plan'>;
}

/** A counter whose series, found once by their labels, the caller keeps and raises. */
interface CounterOf<L extends string> {
  series(labels: LabelValues<L>): { inc(): void };
}

export type Refusal = Extract<Verdict, { kind: 'rate-limited' | 'banned' }>;

export function isRefusal(verdict: Verdict): verdict is Refusal {
  return verdict.kind === 'rate-limited' || verdict.kind === 'banned';
}

/** What a `429` carries beyond the rate-limit headers. */
export const REFUSAL_HEADERS = fieldNames({
  [CACHE_CONTROL_HEADER]: NO_STORE,
  'content-type': `${PROBLEM_CONTENT_TYPE}; charset=utf-8`,
});

/** A refusal's metrics, and the log line of the one that starts a ban. */
export function noteRefusal(
  verdict: Refusal,
  { caller, policy }: { caller: string; policy: Policy },
  log: { warn(fields: object, message: string): void },
  metrics: RefusalMetrics,
): void {
  if (verdict.kind === 'rate-limited' && verdict.banStarted) {
    const { until, durationMs } = verdict.banStarted;
    log.warn(
      { caller, plan: policy.name, bannedUntil: new Date(until).toISOString(), banSeconds: durationMs / 1000 },
      'caller banned',
    );
    metrics.bans.series({ plan: policy.name }).inc();
  }
  metrics.refusals.series({ kind: verdict.kind, plan: policy.name }).inc();
}

/** The problem body of a refusal of a request for `url`. The problem's fixed members are serialised once. */
export function refusalBody(publicUrl: string) {
  // `{"type":…,"title":…,"status":429`: what every refusal of a kind starts with.
  const head = ({ slug }: ProblemError) => {
    const { detail: _, instance: __, ...fixed } = problemBody(publicUrl, slug, '', '');
    return JSON.stringify(fixed).slice(0, -1);
  };
  const heads = {
    'rate-limited': head(new ProblemError('rate-limited', '')),
    'uncounted-throttled': head(new ProblemError('uncounted-throttled', '')),
    'key-banned': head(new ProblemError('key-banned', '')),
  };
  // The last body made. Every member of a refusal changes by the second at most, so a client that
  // hammers gets the same body many times a second: it is made when something in it changes, not for
  // every refusal (a body made of a dozen parts, a date among them, is a share of a refusal's cost worth saving:
  // docs/performance.md#what-counting-instructions-found).
  let last = {
    verdict: undefined as Refusal | undefined,
    url: '',
    forcedBy: undefined as string | undefined,
    body: '',
  };
  return (verdict: Refusal, url: string, forcedBy?: string): string => {
    if (last.url !== url || last.forcedBy !== forcedBy || !sameBody(verdict, last.verdict))
      last = { verdict, url, forcedBy, body: make(verdict, url, forcedBy) };
    return last.body;
  };

  /** A refusal's body; one a test key asked for says so, as its other forced answers do (faults/stage.ts). */
  function make(verdict: Refusal, url: string, forcedBy: string | undefined): string {
    const query = url.indexOf('?');
    const instance = JSON.stringify(query === -1 ? url : url.slice(0, query));
    let members: string;
    let slug: keyof typeof heads = 'key-banned';
    if (verdict.kind === 'rate-limited' && verdict.plan === UNCOUNTED_POLICY.name) {
      const { window, limit, retryAfterSeconds } = verdict;
      slug = 'uncounted-throttled';
      const detail =
        `The paths that count nothing allow ${limit} requests per ${window} (per key, or per address without ` +
        `one). Retry after ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`;
      members = `"detail":"${detail}","instance":${instance},"policy":"${UNCOUNTED_POLICY.name}","window":"${window}","limit":${limit},"retryAfter":${retryAfterSeconds}`;
    } else if (verdict.kind === 'rate-limited') {
      const { window, limit, plan, retryAfterSeconds } = verdict;
      slug = 'rate-limited';
      const forced = forcedBy ? `Injected for this test key (${forcedBy}): ` : '';
      const detail =
        `${forced}The ${plan} plan allows ${limit} requests per ${window}. Retry after ${retryAfterSeconds} ` +
        `second${retryAfterSeconds === 1 ? '' : 's'}.`;
      members = `"detail":"${detail}","instance":${instance},"window":"${window}","limit":${limit},"plan":"${plan}","retryAfter":${retryAfterSeconds}`;
    } else {
      const until = new Date(verdict.bannedUntil).toISOString();
      const detail =
        `Banned until ${until} for sending requests after being rate limited, before the Retry-After it was ` +
        `given. Requests during the ban do not extend it.`;
      members = `"detail":"${detail}","instance":${instance},"retryAfter":${verdict.retryAfterSeconds},"bannedUntil":"${until}"`;
    }
    return `${heads[slug]},${members}}`;
  }
}

/** Whether two refusals (of one URL) have the same body: the members of `refusalBody`. */
function sameBody(a: Refusal, b: Refusal | undefined): boolean {
  if (b === undefined || a.retryAfterSeconds !== b.retryAfterSeconds) return false;
  if (a.kind === 'banned' && b.kind === 'banned') return a.bannedUntil === b.bannedUntil;
  if (a.kind === 'rate-limited' && b.kind === 'rate-limited')
    return a.window === b.window && a.limit === b.limit && a.plan === b.plan;
  return false;
}
