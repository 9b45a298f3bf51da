import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Type from 'typebox';
import { ProblemError } from '../http/problems.js';
import type { App } from '../http/types.js';

/**
 * `/docs`: Swagger UI (swagger-ui-dist, version pinned in package-lock.json) served from node_modules,
 * so the page works offline, plus our adapter (public/docs/petstore-docs.js) for the extensions
 * Swagger UI does not show by itself. Every asset is read once at start-up from a fixed list.
 */
const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ADAPTER = new URL('../../public/docs/petstore-docs.js', import.meta.url);

const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: join(SWAGGER_UI, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: join(SWAGGER_UI, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: join(SWAGGER_UI, 'favicon-32x32.png'), type: 'image/png' },
  'petstore-docs.js': { file: fileURLToPath(ADAPTER), type: 'text/javascript; charset=utf-8' },
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Petstore API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<style>
  body { margin: 0; }
  .petstore-group__title { font: 700 28px/1.2 sans-serif; margin: 32px 0 4px; color: #3b4151; }
  .petstore-group__description { font: 14px/1.4 sans-serif; margin: 0 0 8px; color: #3b4151; }
  .petstore-badge { display: inline-block; margin-left: 10px; padding: 2px 8px; border-radius: 10px; font: 700 11px/1.6 sans-serif; text-transform: uppercase; color: #fff; vertical-align: middle; }
  .petstore-badge--beta { background: #1f6feb; }
  .petstore-badge--experimental { background: #bf5600; }
  .petstore-badge--deprecated { background: #6e7781; }
</style>
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/petstore-docs.js"></script>
</body>
</html>
`;

export function interactiveDocs(app: App): void {
  const assets = Object.fromEntries(Object.entries(ASSETS).map(([name, { file, type }]) => [name, { body: readFileSync(file), type }]));
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/docs/assets/:name', { schema: { hide: true, params: Type.Object({ name: Type.String() }) } }, async (request, reply) => {
    const asset = assets[request.params.name];
    if (!asset) throw new ProblemError('not-found', `There is no asset ${request.params.name}.`);
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
  });
}
