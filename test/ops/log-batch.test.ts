import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LogBatch } from '../../src/ops/log-batch.js';
import { NODE_TS } from '../helpers/process.js';

const fixture = fileURLToPath(new URL('./fixtures/log-exit.ts', import.meta.url));

/** What a destination was handed, write by write. */
function recorder() {
  const writes: string[] = [];
  return { writes, write: (text: string) => void writes.push(text) };
}

const turnEnds = () => new Promise((resolve) => setImmediate(resolve));

describe('log lines gathered over a turn of the event loop', () => {
  it('reach the destination together, in order, once the turn ends', async () => {
    const destination = recorder();
    const batch = new LogBatch(destination);
    batch.write('{"n":1}\n');
    batch.write('{"n":2}\n');
    batch.write('{"n":3}\n');
    expect(destination.writes).toEqual([]);
    await turnEnds();
    expect(destination.writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n']);
    batch.write('{"n":4}\n');
    await turnEnds();
    expect(destination.writes).toEqual(['{"n":1}\n{"n":2}\n{"n":3}\n', '{"n":4}\n']);
    await turnEnds();
    expect(destination.writes).toHaveLength(2);
  });

  it('are written at once by a flush, and not again at the turn end', async () => {
    const destination = recorder();
    const batch = new LogBatch(destination);
    batch.write('{"n":1}\n');
    const flushed = await new Promise<string[]>((resolve) => batch.flush(() => resolve([...destination.writes])));
    expect(flushed).toEqual(['{"n":1}\n']);
    await turnEnds();
    expect(destination.writes).toEqual(['{"n":1}\n']);
  });

  it.each(['exit', 'crash'])('all reach standard output when the process ends in the same turn (%s)', async (how) => {
    const child = spawn(NODE_TS[0], [...NODE_TS[1], fixture, how], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(how === 'exit' ? 0 : 1);
    const lines = output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { n: number; msg: string });
    expect(lines.map((line) => [line.n, line.msg])).toEqual([0, 1, 2].map((n) => [n, 'line before the end']));
  });
});
