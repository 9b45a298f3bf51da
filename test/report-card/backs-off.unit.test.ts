import { describe, expect, it } from 'vitest';
import { type Answer, type Arrival, newCard, statusOf } from '../../src/report-card/card.js';
import { grade } from '../../src/report-card/grade.js';

/**
 * `backs-off`'s rule against the bound its check states (docs/testing-clients.md#is-my-client-a-good-api-citizen), by a
 * seeded simulation through the grader itself: a client waiting base × 2^n (base 100 ms to 1 s) with AWS's full or
 * equal jitter passes in at least 999 of 1,000 runs; one repeating at once or at a fixed interval fails in all of them.
 * Each run: a request answered 500, then repeated 3 times, each repeat answered 500 after 1 ms of work, each wait
 * carrying up to 1 ms of the network's own.
 */

/** xorshift32: the same runs on every machine. */
function seeded(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4_294_967_296;
  };
}

type Waits = (random: () => number) => number[];

/** Whether the grader passed `backs-off` for a client waiting `waits` before each of 3 repeats. */
function passes(waits: number[], random: () => number): boolean {
  const card = newCard(0);
  let now = 1_000_000;
  const request = (at: number, n: number): Arrival => ({
    requestId: `r${n}`,
    conn: 1,
    openedAt: 0,
    real: at,
    key: at,
    method: 'GET',
    path: '/pets/1',
    target: 't',
    body: '',
    operation: 'GET /pets/{petId}',
    version: '2026-11-26',
    pinned: 'known',
    idempotencyKey: null,
    ifNoneMatch: false,
    cursor: false,
    asksToken: false,
    token: null,
  });
  const failed = (at: number): Answer => ({
    real: at,
    key: at,
    status: 500,
    etag: false,
    cursorRefused: false,
    conn: 1,
    mark: 1,
  });
  grade(card, request(now, 0), failed(now + 1));
  now += 1;
  for (const [n, wait] of waits.entries()) {
    const arrival = now + wait + random(); // the network's part
    grade(card, request(arrival, n + 1), failed(arrival + 1));
    now = arrival + 1;
  }
  expect(card.tallies['backs-off'].seen).toBe(1);
  return statusOf(card, 'backs-off') === 'passed';
}

const RUNS = 1_000;
const BASES = [100, 200, 500, 1_000];

function passCount(waits: Waits, seed: number): number {
  const random = seeded(seed);
  let passed = 0;
  for (let run = 0; run < RUNS; run++) if (passes(waits(random), random)) passed++;
  return passed;
}

const exponential =
  (base: number, jitter: (cap: number, random: () => number) => number): Waits =>
  (random) =>
    [0, 1, 2].map((n) => jitter(base * 2 ** n, random));
const full = (cap: number, random: () => number) => random() * cap;
const equal = (cap: number, random: () => number) => cap / 2 + (random() * cap) / 2;

describe('backs-off: the rule meets its bound (1,000 seeded runs per scenario)', () => {
  for (const base of BASES) {
    it(`full jitter, base ${base} ms: at least 999 pass`, () => {
      expect(passCount(exponential(base, full), base)).toBeGreaterThanOrEqual(999);
    });
    it(`equal jitter, base ${base} ms: at least 999 pass`, () => {
      expect(passCount(exponential(base, equal), base + 1)).toBeGreaterThanOrEqual(999);
    });
  }
  for (const interval of [10, 50, 100, 250, 1_000, 5_000, 60_000]) {
    it(`a fixed interval of ${interval} ms: all fail`, () => {
      expect(passCount(() => [interval, interval, interval], interval)).toBe(0);
    });
  }
  it('at once: all fail', () => {
    expect(passCount(() => [0, 0, 0], 7)).toBe(0);
  });
});
