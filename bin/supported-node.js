// Which Node.js lines the service and the CLI run on, and one clear line when this one is older: the range
// is package.json's `engines.node` (`^22.16.0 || ^24.11.0 || ^26.0.0`), read here at run time, so it is
// said in one place. Every entry point (bin/petstore.js, bin/serve.js, `npm start`'s and `npm test`'s
// pre-scripts) runs `requireSupportedNode()` before importing anything else: the build imports
// `node:sqlite`, which an old Node.js lacks, and would otherwise die with a stack trace.
//
//   node bin/supported-node.js     exits 1 with that line on an older Node.js, else 0 and says nothing
//
// Plain JavaScript in syntax that old Node.js parses, importing only what every Node.js has.
import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** @typedef {{ major: number, minor: number, patch: number }} Version */

/**
 * The lines of a range of the form `^a.b.c || ^d.e.f || …` (npm's caret range, which is all `engines`
 * uses), lowest first; null when the range has any other form.
 * @param {string} range
 * @returns {Version[] | null}
 */
export function linesOf(range) {
  const lines = [];
  for (const part of range.split('||')) {
    const caret = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(part.trim());
    if (!caret || Number(caret[1]) === 0) return null;
    lines.push({ major: Number(caret[1]), minor: Number(caret[2]), patch: Number(caret[3]) });
  }
  return lines.sort((a, b) => a.major - b.major);
}

/**
 * @param {string} version `process.versions.node`, such as `20.20.2`
 * @returns {Version}
 */
function parse(version) {
  const [major, minor, patch] = version.split(/[.-]/).map(Number);
  return { major: major || 0, minor: minor || 0, patch: patch || 0 };
}

/**
 * Whether `version` satisfies the range: the major of one of its lines, at or after that line's first
 * release.
 * @param {string} version
 * @param {string} range
 */
export function isSupported(version, range) {
  const v = parse(version);
  return (linesOf(range) || []).some(
    (line) => v.major === line.major && (v.minor > line.minor || (v.minor === line.minor && v.patch >= line.patch)),
  );
}

/**
 * Whether `version` is refused: outside the range and older than its newest line (20, 22.15, 23, 24.10,
 * 25). A major newer than every line (27 under `^26.0.0`) runs: the range cannot name a line not yet
 * released, and npm already warns of it (EBADENGINE). A range of another form refuses nothing.
 * @param {string} version
 * @param {string} range
 */
export function isRefused(version, range) {
  const newest = (linesOf(range) || []).pop();
  if (!newest || isSupported(version, range)) return false;
  return parse(version).major <= newest.major;
}

/**
 * The one line an older Node.js gets, such as `petstore: Node.js 20.20.2 is not supported; use Node.js
 * 22 (22.16 or later), 24 (24.11 or later) or 26.`
 * @param {string} version
 * @param {string} range
 */
export function refusal(version, range) {
  const names = (linesOf(range) || []).map((line) => {
    if (line.minor === 0 && line.patch === 0) return `${line.major}`;
    const first = line.patch === 0 ? `${line.major}.${line.minor}` : `${line.major}.${line.minor}.${line.patch}`;
    return `${line.major} (${first} or later)`;
  });
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}` : names[0];
  return `petstore: Node.js ${version} is not supported; use Node.js ${list}.`;
}

/** `engines.node` of this package's package.json. */
export function enginesRange() {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return String((manifest.engines && manifest.engines.node) || '');
}

/** Exits 1 with the one line on stderr when this Node.js is refused; else returns. */
export function requireSupportedNode() {
  const range = enginesRange();
  if (!isRefused(process.versions.node, range)) return;
  process.stderr.write(`${refusal(process.versions.node, range)}\n`);
  process.exit(1);
}

/** Whether this file is the one `node` was given (`node bin/supported-node.js`), not imported. */
function runDirectly() {
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1] || '')).href;
  } catch {
    return false;
  }
}

if (runDirectly()) requireSupportedNode();
