import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enginesRange, isRefused } from '../../bin/supported-node.js';
import { ROOT } from '../helpers/process.js';

/**
 * On a Node.js older than package.json's `engines`, the CLI's and the service's launchers say so in one
 * line of their own and exit 1, before importing the build (which imports `node:sqlite`, absent there).
 * Run with the machine's own Node.js when it is such an old one; .ci/run checks the same with a Node.js
 * 20 of its own, so here a machine without one skips, saying why.
 */
const OLD_NODE = process.env.OLD_NODE || '/usr/bin/node';
const version = existsSync(OLD_NODE)
  ? execFileSync(OLD_NODE, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '')
  : null;
const old = version !== null && isRefused(version, enginesRange());
if (!old)
  console.warn(
    `\n[old-node] skipped: ${version === null ? `no ${OLD_NODE}` : `${OLD_NODE} is Node.js ${version}, not older than engines`} (set OLD_NODE)\n`,
  );

describe.skipIf(!old)(`the launchers on Node.js ${version} (${OLD_NODE})`, () => {
  it.each([
    ['the CLI', ['bin/petstore.js', 'keys', 'list']],
    ['the service', ['bin/serve.js']],
    ['the check alone (npm start’s and npm test’s pre-scripts)', ['bin/supported-node.js']],
  ])('%s: one line naming the supported lines, exit 1, no stack trace', (_, args) => {
    const run = spawnSync(OLD_NODE, args, {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL: join(ROOT, 'no-such-dir', 'never.db') },
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `petstore: Node.js ${version} is not supported; use Node.js 22 (22.16 or later), 24 (24.11 or later) or 26.\n`,
    );
  });
});
