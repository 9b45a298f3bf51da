import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { enginesRange, isRefused, isSupported, linesOf, refusal } from '../bin/supported-node.js';

/** The Node.js lines the launchers accept (bin/supported-node.js), read from package.json's `engines`. */
const RANGE = '^22.16.0 || ^24.11.0 || ^26.0.0';

describe('the supported Node.js lines', () => {
  it('are read from package.json engines.node, in a form the check parses', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(enginesRange()).toBe(manifest.engines.node);
    expect(linesOf(enginesRange())).not.toBeNull();
  });

  it('holds package.json to the range these cases assume', () => {
    expect(enginesRange()).toBe(RANGE);
  });

  it.each([
    ['20.20.2', false, true],
    ['22.15.0', false, true],
    ['22.16.0', true, false],
    ['22.23.3', true, false],
    ['23.11.1', false, true],
    ['24.10.0', false, true],
    ['24.11.0', true, false],
    ['25.0.0', false, true],
    ['26.0.0', true, false],
    // A line newer than the range names: outside it, but not refused (the launchers run on it).
    ['27.0.0', false, false],
  ])('Node.js %s: supported %s, refused %s', (version, supported, refused) => {
    expect(isSupported(version, RANGE)).toBe(supported);
    expect(isRefused(version, RANGE)).toBe(refused);
  });

  it('says which lines to use in one line', () => {
    expect(refusal('20.20.2', RANGE)).toBe(
      'petstore: Node.js 20.20.2 is not supported; use Node.js 22 (22.16 or later), 24 (24.11 or later) or 26.',
    );
    expect(refusal('18.0.0', '^20.1.2')).toBe(
      'petstore: Node.js 18.0.0 is not supported; use Node.js 20 (20.1.2 or later).',
    );
  });

  it('refuses nothing when the range has a form it does not parse', () => {
    expect(linesOf('>=22')).toBeNull();
    expect(isRefused('20.20.2', '>=22')).toBe(false);
  });
});
