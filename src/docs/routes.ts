import { COUNTS_NOTHING } from '../http/stages.js';
import type { App } from '../http/types.js';
import type { Deprecation } from '../deprecation/notices.js';
import { DEPRECATIONS_PAGE_PATH, deprecationsPage } from '../pets/deprecation.js';
import { interactiveDocs } from './interactive.js';
import { htmlPage } from '../http/html-page.js';

export function docsRoutes(app: App, deprecation: Deprecation): void {
  interactiveDocs(app);
  const page = deprecationsPage(deprecation);
  const html = htmlPage(page.title, page.body);
  app.get(DEPRECATIONS_PAGE_PATH, { config: COUNTS_NOTHING, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(html),
  );
}
