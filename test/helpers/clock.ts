/** A clock the test moves by hand: nothing in the tests waits for real time to pass. */
export interface FakeClock {
  (): number;
  advance(ms: number): void;
  set(iso: string): void;
}

export function fakeClock(startIso = '2026-11-21T12:00:00.000Z'): FakeClock {
  let now = Date.parse(startIso);
  const clock = (() => now) as FakeClock;
  clock.advance = (ms) => {
    now += ms;
  };
  clock.set = (iso) => {
    now = Date.parse(iso);
  };
  return clock;
}
