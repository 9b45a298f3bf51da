import type { BanRules } from './decision.js';
import type { Policy } from './plans.js';

/** A span of time as people write it: `60 seconds`, `3 minutes`, `one hour`, `24 hours`, `2 days`. */
export function spanInWords(ms: number): string {
  const words = (n: number, unit: string) => (n === 1 ? `one ${unit}` : `${n} ${unit}s`);
  if (ms === 86_400_000) return '24 hours';
  if (ms % 86_400_000 === 0) return words(ms / 86_400_000, 'day');
  if (ms % 3_600_000 === 0) return words(ms / 3_600_000, 'hour');
  // Up to two minutes, seconds read better (`60 seconds`, `90 seconds`).
  if (ms > 120_000 && ms % 60_000 === 0) return words(ms / 60_000, 'minute');
  return words(ms / 1000, 'second');
}

/** The uncounted policy's numbers in words: its page says them. */
export function uncountedInWords({ perMinute, perDay }: Pick<Policy, 'perMinute' | 'perDay'>): string {
  return `${perMinute.toLocaleString('en-US')} requests a minute and ${perDay.toLocaleString('en-US')} a day`;
}

/** The ban rules in a sentence, from the configuration: the document's intro and the `key-banned` page say it. */
export function bansInWords(rules: BanRules): string {
  return (
    `A client that gets ${rules.rejections} or more \`429\`s within ${spanInWords(rules.withinMs)} for requests ` +
    'sent before the `Retry-After` of its previous `429` had passed is banned ' +
    `for ${spanInWords(rules.firstBanMs)}; each further ban within ${spanInWords(rules.escalationWindowMs)} of the ` +
    `last one lasts twice as long, up to ${spanInWords(rules.maxBanMs)}. A client that waits every \`Retry-After\` ` +
    'it is given is never banned, however many `429`s it meets; a request that may have been sent before the ' +
    'client could read the previous `429` (within 50 ms of it, on another connection already open) counts ' +
    'toward no ban.'
  );
}
