import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TalliedCounter } from '../../src/ops/tallies.js';

/** The same counter twice: prom-client's own, and the tallied one, each on a registry of its own. */
function pair() {
  const plain = new Registry();
  const tallied = new Registry();
  const config = { name: 'requests_total', help: 'Requests.', labelNames: ['method', 'status'] as const };
  return {
    plain: { registry: plain, counter: new Counter({ ...config, registers: [plain] }) },
    tallied: { registry: tallied, counter: new TalliedCounter({ ...config, registers: [tallied] }) },
  };
}

describe('tallied metrics (src/ops/tallies.ts)', () => {
  it('read as prom-client reads its own, in text and in JSON, read after read', async () => {
    const { plain, tallied } = pair();
    for (const round of [1, 2]) {
      for (const [method, status, times] of [
        ['GET', 200, 3 * round],
        ['GET', 429, round],
        ['POST', 201, 2],
      ] as const) {
        const series = tallied.counter.series({ method, status });
        for (let i = 0; i < times; i++) {
          plain.counter.inc({ method, status });
          series.inc();
        }
      }
      // Read between the rounds too: what a series gained is told once, never twice.
      expect(await tallied.registry.metrics()).toBe(await plain.registry.metrics());
      expect(await tallied.registry.getMetricsAsJSON()).toEqual(await plain.registry.getMetricsAsJSON());
    }
    expect(await tallied.registry.metrics()).toContain('requests_total{method="GET",status="200"} 9');
  });

  it('start again from nothing when the registry resets its metrics', async () => {
    const { plain, tallied } = pair();
    for (const metrics of [plain, tallied]) metrics.registry.resetMetrics();
    tallied.counter.series({ method: 'GET', status: 200 }).inc();
    tallied.registry.resetMetrics();
    tallied.counter.series({ method: 'GET', status: 200 }).inc();
    plain.counter.inc({ method: 'GET', status: 200 });
    expect(await tallied.registry.metrics()).toBe(await plain.registry.metrics());
  });

  it('find one series per label set, whatever the order of the labels and a number given as text', async () => {
    const { plain, tallied } = pair();
    tallied.counter.series({ method: 'GET', status: 200 }).inc();
    tallied.counter.series({ status: '200', method: 'GET' }).inc();
    tallied.counter.series({ method: 'GET', status: 404 }).inc();
    tallied.counter.series({ method: 'HEAD', status: 200 }).inc();
    plain.counter.inc({ method: 'GET', status: 200 }, 2);
    plain.counter.inc({ method: 'GET', status: 404 });
    plain.counter.inc({ method: 'HEAD', status: 200 });
    expect(tallied.counter.series({ method: 'GET', status: 200 })).toBe(
      tallied.counter.series({ method: 'GET', status: '200' }),
    );
    expect(await tallied.registry.metrics()).toBe(await plain.registry.metrics());
  });

  it('refuse a label the metric does not have, as prom-client does', () => {
    const { tallied } = pair();
    expect(() => tallied.counter.series({ method: 'GET', colour: 'red' } as never)).toThrow(/colour/);
  });
});
