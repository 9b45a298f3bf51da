import type { Recorded } from './deliveries.js';
import type { Sent } from './sender.js';

/** How much later than its schedule a retry may go: up to a tenth of its wait, at random. */
export const JITTER = 0.1;

/**
 * What an attempt decides (docs/webhooks.md), pure: a `2xx` succeeds; a `410` fails the delivery and
 * disables its endpoint at once; anything else is retried after the next wait of the schedule (plus
 * up to `JITTER` of it), no sooner than a `429`'s or `503`'s `Retry-After` asks, and a receiver may
 * ask for no more than the schedule's longest wait (whatever it sends, the attempt is recorded and the
 * schedule runs out); when the schedule is spent, the delivery fails. `attemptsBefore` counts the
 * attempts made before this one.
 */
export function decide(
  sent: Sent,
  at: number,
  attemptsBefore: number,
  schedule: readonly number[],
  random: () => number,
): Recorded {
  const attempt = {
    at: new Date(at).toISOString(),
    ...(sent.status === undefined ? { error: sent.error ?? 'no answer' } : { status: sent.status }),
    ms: sent.ms,
  };
  const status = sent.status ?? 0;
  if (status >= 200 && status < 300) return { attempt, state: 'succeeded', nextAttemptAt: null, endpoint: 'succeeded' };
  if (status === 410) return { attempt, state: 'failed', nextAttemptAt: null, endpoint: 'gone' };
  const wait = schedule[attemptsBefore];
  if (wait === undefined) return { attempt, state: 'failed', nextAttemptAt: null, endpoint: 'failed' };
  const asked =
    (status === 429 || status === 503) && sent.retryAfterMs !== undefined
      ? Math.min(sent.retryAfterMs, Math.max(...schedule))
      : 0;
  return {
    attempt,
    state: 'pending',
    nextAttemptAt: at + Math.max(Math.round(wait * (1 + JITTER * random())), asked),
    endpoint: 'unchanged',
  };
}

/** How an attempt is counted in metrics. */
export function outcomeOf(recorded: Recorded): 'succeeded' | 'retrying' | 'failed' | 'gone' {
  if (recorded.state === 'pending') return 'retrying';
  return recorded.endpoint === 'gone' ? 'gone' : recorded.state;
}
