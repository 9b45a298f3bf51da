import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
/** The system clock's one definition, and the access line's `time`, which is pino's and not the service's. */
const ALLOWED = new Set(['clock.ts', 'ops/access-log.ts']);

describe('the clock', () => {
  it('is read from the system in src/clock.ts only: everything else is given a Clock', () => {
    const readers = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !ALLOWED.has(file))
      .filter((file) => /Date\.now\b|new Date\(\)/.test(readFileSync(join(SRC, file), 'utf8')));
    expect(readers).toEqual([]);
  });
});
