import { DAY_MS } from './ratelimit/state.js';

/**
 * How one environment variable is read: as a positive whole number, a port, a boolean, an instant, a
 * delay or a schedule of waits. A bad value is a `ConfigError` naming the variable (./config.ts).
 */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

export type Env = Record<string, string | undefined>;

const YEAR_S = 366 * 24 * 60 * 60;

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };

/** `5s,5m,30m,2h`: the waits before each retry; at most 20 of them, each from 1 s to a day. */
export function scheduleOf(env: Env, name: string, fallback: string): number[] {
  const raw = env[name] || fallback;
  const waits = raw.split(',').map((part) => /^\s*([1-9][0-9]{0,5})([smh])\s*$/.exec(part));
  if (waits.some((w) => w === null) || waits.length > 20) {
    throw new ConfigError(name, `expected up to 20 waits such as 5s,5m,2h (seconds, minutes or hours), got "${raw}"`);
  }
  const ms = waits.map((w) => Number(w![1]) * UNIT_MS[w![2]!]!);
  if (ms.some((wait) => wait > DAY_MS)) throw new ConfigError(name, `a wait is at most a day, got "${raw}"`);
  return ms;
}

/** Whole seconds, in ms; `0` is null: the move never happens by itself. At most a year. */
export function delayOf(env: Env, name: string, fallback: number): number | null {
  const raw = env[name];
  if (raw === '0') return null;
  const seconds = positiveIntOf(env, name, fallback);
  if (seconds > YEAR_S) throw new ConfigError(name, `at most ${YEAR_S} (a year), or 0 for never; got ${seconds}`);
  return seconds * 1000;
}

export function positiveIntOf(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[1-9][0-9]*$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(name, `expected a positive whole number, got "${raw}"`);
  }
  return Number(raw);
}

export function portOf(env: Env, name: string, fallback: number): number {
  const port = positiveIntOf(env, name, fallback);
  if (port > 65_535) throw new ConfigError(name, `a port is at most 65535, got ${port}`);
  return port;
}

export function booleanOf(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

export function instantOf(env: Env, name: string, fallback: string): Date {
  const raw = env[name] || fallback;
  // An ISO 8601 instant needs a date, a time and a zone, or it means different things on different hosts.
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
  const date = new Date(raw);
  if (!iso.test(raw) || Number.isNaN(date.getTime())) {
    throw new ConfigError(name, `expected an ISO 8601 instant such as 2027-07-01T00:00:00Z, got "${raw}"`);
  }
  return date;
}

/** An absolute http(s) URL, without a trailing slash. */
export function httpUrlOf(env: Env, name: string, fallback: string): string {
  const raw = env[name] || fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(name, `expected an http or https URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/** A whole number from 0 (none) to `max`. */
export function wholeUpToOf(env: Env, name: string, fallback: number, max: number): number {
  const raw = env[name];
  const value = raw === '0' ? 0 : positiveIntOf(env, name, fallback);
  if (value > max) throw new ConfigError(name, `at most ${max}, or 0 for none; got ${value}`);
  return value;
}
