/** The client's types are generated from the served document, and the client stands alone. */
import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { GENERATED_TYPES_FILE, generateClientTypes } from '../../scripts/generate-client-types.js';

const CLIENT = new URL('../../client/', import.meta.url);

it('client/generated/schema.ts is what `npm run client:types` generates now', async () => {
  const committed = readFileSync(GENERATED_TYPES_FILE, 'utf8');
  expect(committed === (await generateClientTypes()), 'stale: run `npm run client:types`').toBe(true);
});

it('imports nothing outside its own folder, so it can be copied as it is', () => {
  const files = readdirSync(CLIENT, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  expect(files.length).toBeGreaterThan(5);
  for (const file of files) {
    const source = readFileSync(new URL(file, CLIENT), 'utf8');
    for (const [, specifier] of source.matchAll(/\bfrom '([^']+)'/g)) expect(specifier, file).toMatch(/^\.\.?\//);
    for (const [, specifier] of source.matchAll(/\bfrom '\.\.\/([^']+)'/g))
      expect(`../${specifier}`, file).not.toMatch(/^\.\.\/\.\./);
  }
});
