import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';

/**
 * prom-client hashes and validates a metric's labels at every increment: a measurable share of a
 * request (docs/performance.md#what-counting-instructions-found). The counts made on every request are therefore
 * kept here in plain numbers, one record per label set, found once and then kept by the caller
 * (`series`), and handed to prom-client through its documented `collect` callback, which the registry
 * calls before it reads the metric: `/metrics` shows the same series, in the same text, as if every
 * request had gone through prom-client (test/ops/tallies.test.ts compares the two).
 */

/** One series of a tallied counter. */
export interface CounterSeries {
  inc(): void;
}

interface Tally<L extends string> extends CounterSeries {
  readonly labels: LabelValues<L>;
  count: number;
  told: number;
}

/** A Counter whose series are counted in plain numbers, and told to prom-client when the registry reads it. */
export class TalliedCounter<L extends string> extends Counter<L> {
  readonly #names: readonly L[];
  readonly #series = new SeriesIndex<Tally<L>>();

  constructor(config: CounterConfiguration<L>) {
    super({
      ...config,
      collect(this: Counter<L>) {
        (this as TalliedCounter<L>).#tell();
      },
    });
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

  /** Adds what each series gained since the last read, through prom-client's own `inc`. */
  #tell(): void {
    for (const series of this.#series.all) {
      if (series.count === series.told) continue;
      this.inc(series.labels, series.count - series.told);
      series.told = series.count;
    }
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor resets too, before this class's fields exist.
    if (#series in this) this.#series.clear();
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
