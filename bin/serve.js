#!/usr/bin/env node
// The service as `npm start` starts it: the build's dist/main.js, in this same process (its signals, its
// exit code). On a Node.js older than package.json's `engines` it says so in one line and exits 1, before
// importing the build, which imports `node:sqlite` (./supported-node.js). `node dist/main.js` starts the
// same service without that check.
import { requireSupportedNode } from './supported-node.js';

requireSupportedNode();
const { existsSync } = await import('node:fs');
const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('petstore: not built yet; run `npm run build` first\n');
  process.exit(1);
}
await import(main.href);
