/** The pure parts of test keys' faults: reading `Prefer`, and the seeded sequence a profile draws from. */
import { describe, expect, it } from 'vitest';
import { draw, FaultDraws, seeded } from '../../src/faults/draws.js';
import { appliedPreferences, parsePrefer } from '../../src/faults/prefer.js';
import { type FaultProfile, parseLatency, profileMistake } from '../../src/faults/profile.js';

describe('Prefer (RFC 7240)', () => {
  it.each([
    ['fault=503', { fault: '503' }],
    ['fault=500, latency=800', { fault: '500', latencyMs: 800 }],
    ['FAULT="429"', { fault: '429' }],
    ['fault=Reset; because=testing', { fault: 'reset' }],
    ['respond-async, wait=10, fault=503', { fault: '503' }],
    ['fault=500, fault=503', { fault: '500' }],
    ['fault=418', {}],
    ['fault', {}],
    ['latency=10000', { latencyMs: 10_000 }],
    ['latency=10001', {}],
    ['latency=-1', {}],
    ['latency=1e3', {}],
    ['latency="250"', { latencyMs: 250 }],
    ['x="a, fault=503", latency=5', { latencyMs: 5 }],
    ['', {}],
    [',,;;==', {}],
  ])('%j → %j', (header, expected) => {
    expect(parsePrefer(header)).toEqual(expected);
  });

  it('is absent when nothing was applied, and names what was', () => {
    expect(appliedPreferences({})).toBeUndefined();
    expect(appliedPreferences({ fault: '503', latencyMs: 0 })).toBe('fault=503, latency=0');
  });
});

describe('a fault profile', () => {
  const profile: FaultProfile = {
    rate: 0.25,
    faults: ['503', '429'],
    latencyMs: { min: 50, max: 400 },
    seed: 42,
    setAt: '2026-11-23T00:00:00.000Z',
  };

  it('draws the same sequence from the same seed, and another from another', () => {
    const run = (seed: number) => {
      const next = seeded(seed);
      return Array.from({ length: 200 }, () => draw(next, { ...profile, seed }));
    };
    expect(run(42)).toEqual(run(42));
    expect(run(43)).not.toEqual(run(42));
    const draws = run(42);
    const failed = draws.filter((d) => d.fault).length;
    // 25 % of 200, give or take what chance allows (the sequence is fixed: this cannot flake).
    expect(failed).toBeGreaterThan(30);
    expect(failed).toBeLessThan(70);
    expect(new Set(draws.map((d) => d.fault))).toEqual(new Set([undefined, '503', '429']));
    const latencies = draws.map((d) => d.latencyMs);
    expect(Math.min(...latencies)).toBeGreaterThanOrEqual(50);
    expect(Math.max(...latencies)).toBeLessThanOrEqual(400);
  });

  it('starts its sequence over when the profile is set again, per key', () => {
    const draws = new FaultDraws();
    const first = Array.from({ length: 10 }, () => draws.next('key_a', profile));
    const other = draws.next('key_b', profile);
    expect(other).toEqual(first[0]);
    const again = { ...profile, setAt: '2026-11-23T00:00:01.000Z' };
    expect(Array.from({ length: 10 }, () => draws.next('key_a', again))).toEqual(first);
  });

  it.each([
    [{ rate: 1.5 }, 'rate'],
    [{ rate: -0.1 }, 'rate'],
    [{ rate: Number.NaN }, 'rate'],
    [{ rate: 0.1, faults: [] }, 'faults'],
    [{ rate: 0.1, faults: ['503', '503'] }, 'faults'],
    [{ rate: 0.1, faults: ['404'] }, 'faults'],
    [{ rate: 0.1, latencyMs: { min: 400, max: 50 } }, 'latencyMs'],
    [{ rate: 0.1, latencyMs: { min: 0, max: 10_001 } }, 'latencyMs'],
    [{ rate: 0.1, seed: -1 }, 'seed'],
    [{ rate: 0.1, seed: 2 ** 32 }, 'seed'],
  ])('refuses %j, naming %s', (input, field) => {
    expect(profileMistake(input)?.field).toBe(field);
  });

  it('takes a latency as the CLI writes it', () => {
    expect(parseLatency('50-400')).toEqual({ min: 50, max: 400 });
    expect(parseLatency('120')).toEqual({ min: 120, max: 120 });
    expect(parseLatency('fast')).toBeUndefined();
  });
});
