import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixture = fileURLToPath(new URL('./fixtures/tick-maps.ts', import.meta.url));
const loader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** The states of the `nextTick` record literal's property definitions, as V8 prints them. */
function literalFeedback(mode: 'keep' | 'bare'): string[] {
  // V8 prints to the process's standard output directly; into a pipe, the end of it can be lost at exit.
  const dir = mkdtempSync(join(tmpdir(), 'petstore-tick-maps-'));
  try {
    const out = openSync(join(dir, 'out'), 'w');
    const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--import', loader, fixture, mode], {
      stdio: ['ignore', out, 'pipe'],
      encoding: 'utf8',
      timeout: 30_000,
    });
    closeSync(out);
    expect(run.status, run.stderr).toBe(0);
    return [...readFileSync(join(dir, 'out'), 'utf8').matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]!);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("process.nextTick's record, with one kept alive (src/ops/tick-maps.ts)", () => {
  it('turns megamorphic after a few full collections when none is kept: what the module is for', () => {
    expect(literalFeedback('bare')).toContain('MEGAMORPHIC');
  });

  it('stays monomorphic through the same collections when one is kept', () => {
    expect(literalFeedback('keep')).toEqual(['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC']);
  });
});
