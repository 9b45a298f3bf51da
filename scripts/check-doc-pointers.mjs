// Checks that every pointer at the project's own documents resolves, so that a comment or a guide sends its reader to
// text that exists: the README's topics moved to docs/, and sections move again. Run by `npm run lint`. It fails on:
// - a Markdown file of the repository named anywhere (`docs/keys.md`, `../README.md`, a Markdown link) that does not
//   exist, or whose `#anchor` is not the slug of one of its headings (GitHub's rules); `](#anchor)` in a Markdown file
//   names one of its own headings;
// - a section named in words (README, "Quick start": the README or a docs/ file, a comma or 's, then the quoted
//   heading) that is not exactly one of that file's headings;
// - a citation of a document the repository does not hold: a section sign and a number with no standard named just
//   before it (RFC 9110 §13 is fine), or "the contract" as a document (followed by allows, says, gives, …).
// Prints `file:line: problem` for each, and exits 1 if there is any. Fenced blocks of Markdown files are not read.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const SKIP = /^(?:node_modules|dist|client\/dist|client\/generated|bench\/results)\/|(?:^|\/)package-lock\.json$/;
const BINARY = /\.(?:png|jpe?g|gif|ico|webp|svg|pdf|woff2?|gz|zip|db|sqlite)$/i;

const files = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' })
  .split('\0')
  .filter((file) => file && !SKIP.test(file) && !BINARY.test(file) && existsSync(file));

/** GitHub's anchor of a heading: lower-case, punctuation but `-` and `_` dropped, each space a `-`. */
const slug = (/** @type {string} */ text) =>
  text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');

/** @typedef {{ texts: Set<string>, slugs: Set<string> }} Headings a Markdown file's heading texts and anchors */
const headingsOf = /** @type {Map<string, Headings>} */ (new Map());
/** @param {string} file @returns {Headings} */
function headings(file) {
  const known = headingsOf.get(file);
  if (known) return known;
  const found = /** @type {Headings} */ ({ texts: new Set(), slugs: new Set() });
  const seen = /** @type {Map<string, number>} */ (new Map());
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(?:```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = (heading[1] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    found.texts.add(text).add(text.replace(/`/g, ''));
    const base = slug(text.replace(/`/g, ''));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.slugs.add(n ? `${base}-${n}` : base);
  }
  headingsOf.set(file, found);
  return found;
}

/**
 * The repository file a pointer names, from `from`: relative to its folder, or (outside links) from the root.
 * @param {string} target @param {string} from @param {boolean} [inLink]
 */
function resolve(target, from, inLink = false) {
  if (target.startsWith('/')) return normalize(target.slice(1));
  const relative = normalize(join(dirname(from), target));
  if (existsSync(relative) || inLink) return relative;
  return normalize(target);
}

const MD_POINTER = /(?<![\w./-])((?:\.{1,2}\/)*(?:[\w-]+\/)*[\w.-]+\.md)(?:#([\p{L}\p{N}_-]+))?/gu;
const OWN_ANCHOR = /\]\(#([\p{L}\p{N}_-]+)\)/gu;
const NAMED = /\b(README(?:\.md)?|(?:[\w-]+\/)*[\w-]+\.md)(?:'s|’s|,)?\s+(?:"([^"]+)"|“([^”]+)”|'([^']+)')/g;
// A section sign before a number (fine after a standard's name: STANDARD), or "the contract" used as a document.
const CITATION =
  /§\s*\d[\d.]*|\b(?:by|per) contract\b|(?:\(|\bas |\bper )the contract\b|\bthe contract(?:,|\)| (?:allows|promises|gives|says|states|requires|permits|specifies|defines|forbids))/g;
const STANDARD = /\b(?:RFC|ISO|IEC|ECMA|IEEE|BCP|STD)\b/;

const problems = /** @type {string[]} */ ([]);
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  if (text.includes('\0')) continue;
  const isMarkdown = file.endsWith('.md');
  // The file as one line, comment markers at the start of each line dropped, so a pointer may wrap; a Markdown file's
  // fenced blocks (commands, the layout's tree) hold no pointers.
  const starts = /** @type {number[]} */ ([]);
  let flat = '';
  let fenced = false;
  for (const line of text.split('\n')) {
    const fence = isMarkdown && /^\s*(?:```|~~~)/.test(line);
    if (fence) fenced = !fenced;
    starts.push(flat.length);
    flat += fence || fenced ? ' ' : `${line.replace(/^\s*(?:\/\/+|\*(?!\/)|#+|--)?\s*/, '')} `;
  }
  /** @type {(offset: number, message: string) => void} */
  const report = (offset, message) => {
    problems.push(`${file}:${starts.filter((start) => start <= offset).length}: ${message}`);
  };

  for (const match of flat.matchAll(MD_POINTER)) {
    const [pointer, target = '', anchor] = match;
    const path = resolve(target, file, flat.slice(match.index - 2, match.index) === '](');
    if (!existsSync(path)) report(match.index, `${pointer}: no file ${path}`);
    else if (anchor && !headings(path).slugs.has(anchor)) report(match.index, `${pointer}: no heading #${anchor}`);
  }
  if (isMarkdown) {
    for (const { 1: anchor = '', index } of flat.matchAll(OWN_ANCHOR)) {
      if (!headings(file).slugs.has(anchor)) report(index, `#${anchor}: no such heading in this file`);
    }
  }
  for (const match of flat.matchAll(NAMED)) {
    const [, named = '', double, curly, single] = match;
    const path = named.startsWith('README') && !named.includes('/') ? 'README.md' : resolve(named, file);
    const section = double ?? curly ?? single ?? '';
    if (!existsSync(path)) report(match.index, `${named}: no file ${path}`);
    else if (!headings(path).texts.has(section)) report(match.index, `${path} has no heading "${section}"`);
  }
  for (const match of flat.matchAll(CITATION)) {
    if (match[0].startsWith('§') && STANDARD.test(flat.slice(Math.max(0, match.index - 12), match.index))) continue;
    report(match.index, `"${match[0]}" cites a document the repository does not hold: name the project's own`);
  }
}

for (const problem of problems) console.error(problem);
if (problems.length) {
  console.error(`check-doc-pointers: ${problems.length} pointer(s) that do not resolve`);
  process.exit(1);
}
