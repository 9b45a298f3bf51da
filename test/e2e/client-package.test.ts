import { execFile } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { cli, ROOT, startServer, tempDir } from '../helpers/process.js';

const run = promisify(execFile);
const NPM_QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

/** What another project writes: the client from the package, typed, calling the service. */
const USE_IT = `import { PetstoreClient, type Pet, type Usage } from '@petstore/client';

const client = new PetstoreClient({ apiKey: process.env.KEY!, baseUrl: process.env.BASE_URL! });
const pets = await client.listPets({ limit: 2 });
const first: Pet = pets.data[0]!;
const usage: Usage = await client.usage();
console.log(JSON.stringify({ names: pets.data.map((p) => p.name), first: first.id, plan: usage.plan, used: usage.windows.minute.used, remaining: client.rateLimit?.remaining }));
`;

/**
 * Loads the client as another project would, and lists every module that loading it loaded: a hook
 * of Node's module customisation API (`module.register`) sees each URL resolved.
 */
const LOADS = `import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const loaded = [];
port1.on('message', (url) => loaded.push(url));
register('data:text/javascript,' + encodeURIComponent(\`
  let port;
  export function initialize(data) { port = data.port; }
  export async function resolve(specifier, context, next) { const resolved = await next(specifier, context); port.postMessage(resolved.url); return resolved; }
\`), { data: { port: port2 }, transferList: [port2] });
await import('@petstore/client');
await new Promise((resolve) => setTimeout(resolve, 100));
port1.close();
console.log(JSON.stringify(loaded));
`;

describe('the client as a package', () => {
  it('npm pack of the client workspace gives a small tarball another project installs, type-checks against and calls the service with', async () => {
    const packed = tempDir();
    await run('npm', ['pack', '--workspace', 'client', '--pack-destination', packed, ...NPM_QUIET], {
      cwd: ROOT,
      env: { ...process.env, npm_config_loglevel: 'error' },
    });
    const tarball = readdirSync(packed).find((name) => name.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    expect(statSync(join(packed, tarball!)).size).toBeLessThan(200 * 1024);

    // An empty project: the tarball is all it gets (its dependencies from the registry; nothing is built).
    const project = tempDir();
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'uses-petstore', private: true, type: 'module' }),
    );
    await run('npm', ['install', join(packed, tarball!), '--ignore-scripts', '--omit=dev', ...NPM_QUIET], {
      cwd: project,
    });
    // No runtime dependency came with it: the client is all the project has.
    expect(readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual(['@petstore']);
    // Importing it loads the client's own modules and Node's, never a server module.
    writeFileSync(join(project, 'loads.mjs'), LOADS);
    const loaded = JSON.parse((await run(process.execPath, ['loads.mjs'], { cwd: project })).stdout) as string[];
    expect(loaded.length).toBeGreaterThan(5);
    for (const url of loaded)
      expect(url.startsWith('node:') || url.includes('/node_modules/@petstore/client/dist/'), url).toBe(true);
    writeFileSync(join(project, 'use-it.ts'), USE_IT);
    // Its types come from the package's declarations, through the `exports` map.
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const compilerOptions = [
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--types',
      'node',
      '--typeRoots',
      join(ROOT, 'node_modules/@types'),
    ];
    await run(process.execPath, [tsc, ...compilerOptions, '--outDir', project, 'use-it.ts'], { cwd: project });

    const database = join(tempDir(), 'p.db');
    const server = await startServer({ DATABASE_URL: database, DEMO_KEYS: 'false' });
    try {
      const created = await cli(['keys', 'create', '--plan', 'pro'], { DATABASE_URL: database });
      const key = /pet_[A-Za-z0-9_-]{32}/.exec(created.stdout)?.[0];
      expect(key).toBeDefined();
      const { stdout } = await run(process.execPath, ['use-it.js'], {
        cwd: project,
        env: { ...process.env, KEY: key!, BASE_URL: server.url },
      });
      expect(JSON.parse(stdout)).toEqual({
        names: [expect.any(String), expect.any(String)],
        first: 1,
        plan: 'pro',
        used: 1,
        remaining: 299,
      });
    } finally {
      await server.stop();
    }
  }, 180_000);
});
