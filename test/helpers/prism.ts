import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, ROOT, tempDir } from './process.js';

/**
 * Stoplight Prism's validating proxy (`prism proxy`) in front of a listening service: every request
 * passes through it, and it says in each answer's `sl-violations` header where the request or the
 * answer departs from the document it was given.
 */
export interface PrismProxy {
  url: string;
  stop(): Promise<void>;
}

export interface Violation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

export async function prismProxy(document: string, upstream: string): Promise<PrismProxy> {
  const file = join(tempDir(), 'openapi.json');
  writeFileSync(file, document);
  const port = await freePort();
  const child: ChildProcess = spawn(
    join(ROOT, 'node_modules/.bin/prism'),
    ['proxy', file, upstream, '--host', '127.0.0.1', '--port', String(port)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const started = Date.now();
  while (!output.includes('Prism is listening')) {
    if (child.exitCode !== null || Date.now() - started > 30_000)
      throw new Error(`prism proxy did not start:\n${output.slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

/** The violations an answer's `sl-violations` header lists (none when it is absent). */
export function violationsOf(header: string | null | undefined): Violation[] {
  return header ? (JSON.parse(header) as Violation[]) : [];
}
