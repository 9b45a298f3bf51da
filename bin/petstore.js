#!/usr/bin/env node
// The CLI runs from the build that `npm start` (or `npm run build`) makes. On a Node.js older than
// package.json's `engines` it says so in one line and exits 1, before importing the build (./supported-node.js).
import { requireSupportedNode } from './supported-node.js';

requireSupportedNode();
const { existsSync } = await import('node:fs');
const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('petstore: not built yet; run `npm run build` first\n');
  process.exit(1);
}
await import(cli.href);
