/**
 * The one benchmark result the repository keeps: a reference run per mode (`bench/reference/<mode>.json`,
 * a whole `npm run bench` run), which every run is compared against. A run's own results go to
 * `bench/results/` (not tracked); `BENCH_SAVE_REFERENCE=1` makes a whole run the new reference. Machines
 * differ, so what is compared is what travels between them: each path's req/s as a share of the same
 * run's bare `node:http` baseline, and the service's CPU µs per request.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModeResult } from './http.js';
import { ROOT } from './service.js';

export const REFERENCE_DIR = join(ROOT, 'bench/reference');

interface Kept {
  date: string;
  baseline: { rps: number };
  rows: Array<{ path: string; rps: number; cpuUsPerRequest: number }>;
}

/** Each path of `mode` beside the reference run's figure for it; nothing when no reference of the mode is kept. */
export function againstReference(mode: ModeResult): { date: string; rows: Record<string, string>[] } | undefined {
  const file = join(REFERENCE_DIR, `${mode.mode}.json`);
  if (!existsSync(file)) return undefined;
  const kept = JSON.parse(readFileSync(file, 'utf8')) as Kept;
  const before = new Map(kept.rows.map((row) => [row.path, row]));
  const rows = mode.rows.flatMap((row) => {
    const then = before.get(row.path);
    if (!then) return [];
    const share = (rps: number, of: number) => (rps / of).toFixed(2);
    return [
      {
        path: row.path,
        '× node:http, reference → now': `${share(then.rps, kept.baseline.rps)} → ${share(row.rps, mode.baseline.rps)}`,
        'CPU µs/req, reference → now': `${then.cpuUsPerRequest} → ${row.cpuUsPerRequest}`,
      },
    ];
  });
  return { date: kept.date, rows };
}

/** Keeps `content` (a whole run's result of `mode`) as the mode's reference. */
export function keepAsReference(mode: string, content: string): void {
  writeFileSync(join(REFERENCE_DIR, `${mode}.json`), content);
}
