/**
 * The chart of a run (`npm run bench` writes it as latest.svg beside the results), written by hand (no charting library
 * for a dozen bars): one panel per mode, a horizontal bar of req/s per path (refusals and peers in colours of their
 * own), and the mode's node:http baseline as a dashed line.
 * One scale for every panel, so that the modes compare at a glance.
 */
import type { ModeResult } from './http.js';

const WIDTH = 910;
const LABEL = 340;
const BARS = 460;
const ROW = 24;
const HEAD = 34;

export function chart(modes: ModeResult[], title: string): string {
  const max = Math.max(...modes.flatMap((m) => [m.baseline.rps, ...m.rows.map((r) => r.rps)])) * 1.05;
  const x = (rps: number) => LABEL + (rps / max) * BARS;
  const parts: string[] = [];
  let y = 40;
  for (const mode of modes) {
    const top = y;
    parts.push(
      `<text x="10" y="${y + 18}" class="mode">${escapeXml(mode.mode)} <tspan class="note">(${escapeXml(mode.stores)})</tspan></text>`,
    );
    y += HEAD;
    for (const row of mode.rows) {
      const ratio = row.rps / mode.baseline.rps;
      parts.push(
        `<text x="${LABEL - 8}" y="${y + 16}" text-anchor="end">${escapeXml(row.path)}</text>`,
        `<rect x="${LABEL}" y="${y + 4}" width="${(x(row.rps) - LABEL).toFixed(1)}" height="${ROW - 8}" class="${row.peer ? 'peer' : row.path.startsWith('429') ? 'refusal' : 'bar'}"/>`,
        `<text x="${(x(row.rps) + 6).toFixed(1)}" y="${y + 16}">${row.rps.toLocaleString('en')} (${ratio.toFixed(2)}×, p99 ${row.p99} ms)</text>`,
      );
      y += ROW;
    }
    const bx = x(mode.baseline.rps).toFixed(1);
    parts.push(
      `<line x1="${bx}" y1="${top + HEAD - 4}" x2="${bx}" y2="${y + 2}" class="baseline"/>`,
      `<text x="${bx}" y="${top + HEAD - 8}" text-anchor="end" class="note">node:http baseline ${mode.baseline.rps.toLocaleString('en')} req/s</text>`,
    );
    y += 16;
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y + 10}" viewBox="0 0 ${WIDTH} ${y + 10}" font-family="system-ui, sans-serif" font-size="12">`,
    '<style>.bar{fill:#3b7dd8}.refusal{fill:#d8893b}.peer{fill:#8a8a8a}.baseline{stroke:#222;stroke-dasharray:4 3}.mode{font-weight:bold;font-size:14px}.note{fill:#555}text{fill:#222}</style>',
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="10" y="22" class="mode">${escapeXml(title)}</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
