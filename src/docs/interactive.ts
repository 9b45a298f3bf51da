import { COUNTS_NOTHING } from '../http/stages.js';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Type from 'typebox';
import { ProblemError } from '../http/problems.js';
import type { App } from '../http/types.js';
import { VERSIONS_PAGE_PATH } from '../versions/notices.js';
import { NEWEST_VERSION, OLDEST_VERSION, VERSIONS } from '../versions/versions.js';

/**
 * `/docs`: Swagger UI (swagger-ui-dist, version pinned in package-lock.json) served from node_modules,
 * so the page works offline, plus our adapter (public/docs/petstore-docs.js) for the extensions
 * Swagger UI does not show by itself, the live meter, a test key's report card
 * (public/docs/petstore-card.js), and the key's events as they are written (public/docs/petstore-events.js).
 * Every asset is read once at start-up from a fixed list.
 */
const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ADAPTER = new URL('../../public/docs/petstore-docs.js', import.meta.url);
const CARD = new URL('../../public/docs/petstore-card.js', import.meta.url);
const EVENTS = new URL('../../public/docs/petstore-events.js', import.meta.url);

const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: join(SWAGGER_UI, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: join(SWAGGER_UI, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: join(SWAGGER_UI, 'favicon-32x32.png'), type: 'image/png' },
  'petstore-docs.js': { file: fileURLToPath(ADAPTER), type: 'text/javascript; charset=utf-8' },
  'petstore-card.js': { file: fileURLToPath(CARD), type: 'text/javascript; charset=utf-8' },
  'petstore-events.js': { file: fileURLToPath(EVENTS), type: 'text/javascript; charset=utf-8' },
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
  #petstore-side { position: fixed; top: 12px; right: 12px; z-index: 1000; width: 326px; max-height: calc(100vh - 24px); overflow-y: auto; }
  /* Room for the side column beside the document, wherever there is room: it covers none of Swagger UI's controls. */
  @media (min-width: 1000px) { #swagger-ui, #petstore-versions { margin-right: 350px; } }
  #petstore-meter, #petstore-card, #petstore-log, #petstore-events { box-sizing: border-box; margin-bottom: 8px; padding: 10px 12px; background: #fff; border: 1px solid #d0d7de; border-radius: 8px; box-shadow: 0 2px 8px rgba(0,0,0,.15); font: 13px/1.4 sans-serif; color: #3b4151; }
  .petstore-meter__title { font-weight: 700; margin-bottom: 6px; }
  .petstore-meter__window { margin: 6px 0; }
  .petstore-meter__bar { height: 8px; background: #eaeef2; border-radius: 4px; overflow: hidden; }
  .petstore-meter__fill { height: 100%; background: #2da44e; transition: width .2s; }
  .petstore-meter__clock { margin-top: 8px; padding-top: 6px; border-top: 1px solid #eaeef2; }
  .petstore-meter__buttons button { margin: 4px 4px 0 0; padding: 2px 8px; border: 1px solid #d0d7de; border-radius: 4px; background: #f6f8fa; cursor: pointer; }
  #petstore-versions { padding: 12px 20px 0; font: 14px/1.4 sans-serif; color: #3b4151; }
  .petstore-meter__countdown { margin-top: 8px; font-weight: 700; color: #cf222e; }
  .petstore-card__fold { display: block; padding: 0; border: 0; background: none; color: inherit; font: inherit; font-weight: 700; cursor: pointer; }
  .petstore-card__since { margin-bottom: 4px; }
  .petstore-card__checks { list-style: none; margin: 0; padding: 0; }
  .petstore-card__row { display: flex; align-items: baseline; gap: 6px; width: 100%; padding: 2px 0; border: 0; background: none; font: inherit; color: inherit; text-align: left; }
  button.petstore-card__row { cursor: pointer; }
  button.petstore-card__row:hover .petstore-card__name { text-decoration: underline; }
  .petstore-card__mark { flex: none; width: 10px; height: 10px; border-radius: 50%; background: var(--petstore-mark); }
  .petstore-card__name { flex: 1; }
  .petstore-card__status { font-weight: 700; color: var(--petstore-mark); }
  .petstore-card__counts { color: #6e7781; font-size: 12px; }
  .petstore-card__check--passed { --petstore-mark: #1a7f37; }
  .petstore-card__check--failed { --petstore-mark: #cf222e; }
  .petstore-card__check--untested { --petstore-mark: #8c959f; }
  .petstore-card__check--untested .petstore-card__status { font-weight: 400; color: #6e7781; }
  .petstore-card__failure { margin: 2px 0 6px 16px; padding: 4px 8px; border-left: 3px solid #cf222e; background: #fff8f8; overflow-wrap: anywhere; }
</style>
</head>
<body>
<div id="petstore-versions"><label>API version <select id="petstore-version">${[...VERSIONS]
  .reverse()
  .map(
    (v) =>
      `<option value="${v}">${v}${v === NEWEST_VERSION ? ' (newest)' : v === OLDEST_VERSION ? ' (deprecated)' : ''}</option>`,
  )
  .join('')}</select></label> <a href="${VERSIONS_PAGE_PATH}">what changed</a></div>
<div id="swagger-ui"></div>
<div id="petstore-side"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/petstore-card.js"></script>
<script src="/docs/assets/petstore-events.js"></script>
<script src="/docs/assets/petstore-docs.js"></script>
</body>
</html>
`;

export function interactiveDocs(app: App): void {
  const assets = Object.fromEntries(
    Object.entries(ASSETS).map(([name, { file, type }]) => [name, { body: readFileSync(file), type }]),
  );
  app.get('/docs', { config: COUNTS_NOTHING, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(PAGE),
  );
  app.get(
    '/docs/assets/:name',
    { config: COUNTS_NOTHING, schema: { hide: true, params: Type.Object({ name: Type.String() }) } },
    async (request, reply) => {
      const asset = assets[request.params.name];
      if (!asset) throw new ProblemError('not-found', `There is no asset ${request.params.name}.`);
      return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body);
    },
  );
}
