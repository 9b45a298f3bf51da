/** The targets of issue 7, judged on a run's figures (reported, never asserted). */
import type { ModeResult, Row } from './http.js';

export interface Verdict {
  mode: string;
  target: string;
  measured: string;
  met: boolean;
}

const P99_MS = 20;

export function targets(modes: ModeResult[]): Verdict[] {
  const verdicts: Verdict[] = [];
  for (const mode of modes) {
    const ratio = (row: Row) => row.rps / mode.baseline.rps;
    const judge = (rows: Row[], min: number) => {
      for (const row of rows) verdicts.push({ mode: mode.mode, target: `${row.path} ≥ ${min}× baseline`, measured: `${ratio(row).toFixed(2)}×`, met: ratio(row) >= min });
    };
    const find = (prefix: string) => mode.rows.filter((r) => r.path.startsWith(prefix));
    const redis = mode.rows.some((r) => r.redisPerRequest !== undefined);
    if (redis) {
      judge(find('GET /pets/{petId}').slice(0, 1), 0.5);
      const worst = Math.max(...mode.rows.map((r) => r.redisPerRequest ?? 0));
      verdicts.push({ mode: mode.mode, target: '≤ 1 Redis round trip per request', measured: `${worst.toFixed(3)} (worst path)`, met: worst <= 1.0005 });
    } else {
      judge(find('GET /pets/{petId}').slice(0, 1), 0.7);
      judge(find('429'), 0.8);
    }
    for (const row of mode.rows) verdicts.push({ mode: mode.mode, target: `${row.path}: p99 < ${P99_MS} ms`, measured: `${row.p99} ms`, met: row.p99 < P99_MS });
  }
  return verdicts;
}
