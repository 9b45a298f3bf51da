/**
 * bench/event-streams.ts's figures of a store, and the table that prints them beside the targets for 2,000 streams on
 * one instance: at most 30 KB of memory each, an event on its stream within 250 ms of its commit (p99), live keys'
 * ordinary requests keeping at least 95 % of their throughput.
 */
import { type ByTurns, medianOf, round } from './load.js';
import type { Memory } from './service-memory.js';

export const TARGETS = { kbPerStream: 30, p99Ms: 250, throughput: 0.95 };
const KB = 1024;

export interface StreamFigures {
  mode: string;
  stores: string;
  keys: number;
  streams: number;
  opened: number;
  failed: Record<string, number>;
  memory: { before: Memory; after: Memory; rssPerStream: number; heapPerStream: number };
  arrival: {
    orders: number;
    statuses: Record<string, number>;
    writeSeconds: number;
    frames: number;
    expected: number;
    p50: number;
    p99: number;
    max: number;
  };
  turns: ByTurns;
  /** The fewest streams open in a "with" turn. */
  fewestOpen: number;
  /** Streams the service ended while they were meant to be open (a client too slow, a timeout): 0 is right. */
  ended: number;
}

const kb = (bytes: number) => `${(bytes / KB).toFixed(1)} KB`;
const mb = (bytes: number) => `${(bytes / KB / KB).toFixed(1)} MB`;
const n = (value: number, digits: number) => round(value, digits).toLocaleString('en');
/** The median of `values`, and their least and greatest. */
const spread = (values: number[], digits = 0) =>
  `${n(medianOf(values), digits)} (${n(Math.min(...values), digits)}–${n(Math.max(...values), digits)})`;
/** A row of the table: what was measured, the target, and whether it was met (blank: no target). */
const row = (figure: string, measured: string, target = '', ok?: boolean) => ({
  figure,
  measured,
  target,
  met: ok === undefined ? '' : ok ? 'yes' : 'NO',
});

/**
 * Both held to the target: RSS after a load has resident pages that the streams' objects fill before it grows, and
 * the heap leaves out what is native (sockets, parsers).
 */
function memoryRows({ memory: m }: StreamFigures) {
  const target = `≤ ${TARGETS.kbPerStream} KB`;
  const { rss: rssBefore, heap: heapBefore } = m.before;
  return [
    row(
      'memory per stream, RSS',
      `${kb(m.rssPerStream)} (${mb(rssBefore)} → ${mb(m.after.rss)})`,
      target,
      m.rssPerStream <= TARGETS.kbPerStream * KB,
    ),
    row(
      'memory per stream, heap used',
      `${kb(m.heapPerStream)} (${mb(heapBefore)} → ${mb(m.after.heap)})`,
      target,
      m.heapPerStream <= TARGETS.kbPerStream * KB,
    ),
  ];
}

/** A store's figures beside the targets. */
export function streamsTable(f: StreamFigures): Record<string, string>[] {
  const { arrival: r, turns: t } = f;
  const failed = Object.keys(f.failed).length ? `; failed ${JSON.stringify(f.failed)}` : '';
  const opened = `${f.opened} of ${f.streams} (${f.keys} keys × ${f.streams / f.keys})${failed}`;
  return [
    row('streams open', opened, 'all (2,000)', f.opened === f.streams),
    ...memoryRows(f),
    row('commit → arrival p50', `${r.p50} ms`),
    row('commit → arrival p99', `${r.p99} ms (max ${r.max} ms)`, `≤ ${TARGETS.p99Ms} ms`, r.p99 <= TARGETS.p99Ms),
    row(
      'events received',
      `${n(r.frames, 0)} of ${n(r.expected, 0)}`,
      'all',
      r.frames === r.expected && r.expected > 0,
    ),
    row('orders placed', `${r.orders} in ${r.writeSeconds} s: ${JSON.stringify(r.statuses)}`),
    row('GET /pets/{petId} req/s without streams', spread(t.rps.a)),
    row(`GET /pets/{petId} req/s with streams (fewest open ${f.fewestOpen})`, spread(t.rps.b)),
    row(
      `with ÷ without, by turns (${t.ratios.length} rounds)`,
      spread(t.ratios, 3),
      `≥ ${TARGETS.throughput}`,
      t.median >= TARGETS.throughput,
    ),
    row(
      'service CPU µs/req, without → with',
      `${t.cpuUsPerRequest.a} → ${t.cpuUsPerRequest.b} (machine ${t.machineUsPerRequest.a} → ${t.machineUsPerRequest.b})`,
    ),
    row('statuses without / with', `${JSON.stringify(t.statuses.a)} / ${JSON.stringify(t.statuses.b)}`),
    row('streams the service ended', String(f.ended), '0', f.ended === 0),
  ];
}
