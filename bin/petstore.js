#!/usr/bin/env node
// The CLI runs from the build that `npm start` (or `npm run build`) makes.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('petstore: not built yet; run `npm run build` first\n');
  process.exit(1);
}
await import(cli.href);
