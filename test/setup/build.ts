import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * Global set-up of the projects that start the service or the CLI in processes of their own: builds
 * `dist/` as `npm run build` does, unless it is newer than every source file (a build already made
 * for this run, by another project or by .ci/run).
 */
export default function build(): void {
  if (builtAfter(join(ROOT, 'src'))) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
}

function builtAfter(sources: string): boolean {
  const built = statSync(join(ROOT, 'dist/.tsbuildinfo'), { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return false;
  const files = readdirSync(sources, { recursive: true, encoding: 'utf8' }).map((file) => join(sources, file));
  return files.every((file) => statSync(file).mtimeMs < built);
}
