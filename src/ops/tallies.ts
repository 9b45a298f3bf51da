import { Counter, type CounterConfiguration, Histogram, type HistogramConfiguration, type LabelValues } from 'prom-client';

/**
 * prom-client hashes and validates a metric's labels at every increment or observation: about a
 * twentieth of the instructions of a request the fast lane answers. The counts made on every request
 * are therefore kept here in plain numbers, one record per label set, found once and then kept by the
 * caller (`series`), and handed to prom-client when the registry is read: `/metrics` shows the same
 * series, in the same text, as if every request had gone through prom-client.
 */

/** One series of a tallied counter. */
export interface CounterSeries {
  inc(): void;
}

/** One series of a tallied histogram. */
export interface HistogramSeries {
  observe(value: number): void;
}

/**
 * A Counter whose series are counted in plain numbers. At every read (`get`, which the registry
 * calls) what each series gained since the last read is added through prom-client's own `inc`.
 */
export class TalliedCounter<L extends string> extends Counter<L> {
  readonly #names: readonly L[];
  readonly #series = new SeriesIndex<{ labels: LabelValues<L>; count: number; told: number; inc(): void }>();

  constructor(config: CounterConfiguration<L>) {
    super(config);
    this.#names = config.labelNames ?? [];
  }

  /** The series of `labels`, made (and checked by prom-client) on first use. */
  series(labels: LabelValues<L>): CounterSeries {
    return this.#series.find(this.#names, labels, () => {
      // Checks the labels, and shows the series (at 0) from now on.
      this.inc(labels, 0);
      return {
        labels,
        count: 0,
        told: 0,
        inc() {
          this.count++;
        },
      };
    });
  }

  override async get() {
    for (const series of this.#series.all) {
      if (series.count === series.told) continue;
      this.inc(series.labels, series.count - series.told);
      series.told = series.count;
    }
    return super.get();
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor resets too, before this class's fields exist.
    if (#series in this) this.#series.clear();
  }
}

/**
 * A Histogram whose series are counted in plain numbers: observations are made through `series`
 * only, and the registry's read (`getForPromString`, which `get` uses too) describes them as
 * prom-client describes its own (test/ops/tallies.test.ts compares the two).
 */
export class TalliedHistogram<L extends string> extends Histogram<L> {
  readonly #config: HistogramConfiguration<L>;
  readonly #names: readonly L[];
  readonly #bounds: readonly number[];
  readonly #series = new SeriesIndex<HistogramCounts<L>>();

  constructor(config: HistogramConfiguration<L> & { buckets: number[] }) {
    super(config);
    this.#config = config;
    this.#names = config.labelNames ?? [];
    this.#bounds = [...config.buckets].sort((a, b) => a - b);
  }

  /** The series of `labels`, made (and checked by prom-client) on first use. */
  series(labels: LabelValues<L>): HistogramSeries {
    return this.#series.find(this.#names, labels, () => {
      // prom-client's check of the labels, without making a series of its own.
      this.labels(labels);
      return new HistogramCounts(labels, this.#bounds);
    });
  }

  /** What prom-client's registry reads of a histogram (lib/registry.js); prom-client's `get` reads it too. */
  async getForPromString() {
    const { name, help, aggregator = 'sum' } = this.#config;
    const bucket = `${name}_bucket`;
    const values = [];
    for (const { labels, counts, sum, count } of this.#series.all) {
      let below = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        below += counts[i]!;
        values.push({ labels: { le: this.#bounds[i] }, sharedLabels: labels, value: below, metricName: bucket, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: labels, value: sum, metricName: `${name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: labels, value: count, metricName: `${name}_count`, exemplar: undefined },
      );
    }
    return { name, help, type: 'histogram', values, aggregator };
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor resets too, before this class's fields exist.
    if (#series in this) this.#series.clear();
  }
}

class HistogramCounts<L extends string> implements HistogramSeries {
  readonly labels: LabelValues<L>;
  readonly #bounds: readonly number[];
  /** Observations per bucket, not cumulative; the last slot holds those above every bound. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(labels: LabelValues<L>, bounds: readonly number[]) {
    this.labels = labels;
    this.#bounds = bounds;
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  /** As prom-client's: a value goes in the first bucket whose bound is not below it. */
  observe(value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i] = this.counts[i]! + 1;
    this.sum += value;
    this.count++;
  }
}

/**
 * Series found by their label values, one `Map` a label, in the order of the metric's label names:
 * nothing is built to look one up (a key string made of the values cost more than the rest of a
 * refusal's bookkeeping). A value is taken as prom-client takes it, as text: `200` and `'200'` are one series.
 */
class SeriesIndex<S> {
  readonly #root = new Map<string, unknown>();
  /** Every series, in the order they were made. */
  readonly all: S[] = [];

  find<L extends string>(names: readonly L[], labels: LabelValues<L>, make: () => S): S {
    let level = this.#root;
    for (let i = 0; i < names.length - 1; i++) {
      const value = textOf(labels[names[i]!]);
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) level.set(value, (next = new Map()));
      level = next;
    }
    const last = names.length === 0 ? '' : textOf(labels[names[names.length - 1]!]);
    let series = level.get(last) as S | undefined;
    if (series === undefined) {
      series = make();
      level.set(last, series);
      this.all.push(series);
    }
    return series;
  }

  clear(): void {
    this.#root.clear();
    this.all.length = 0;
  }
}

function textOf(value: string | number | undefined): string {
  return typeof value === 'string' ? value : String(value);
}
