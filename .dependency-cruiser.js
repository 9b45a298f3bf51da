// The folders of src/ point one way (docs/design.md#folders-in-one-direction), checked by `npm run lint`
// (`depcruise src`). The edge (http/) and the neutral leaves are at the bottom; each component knows the edge and
// the components beneath it; the wiring at the top of src/ knows them all, and nothing knows it back.

/** The wiring: the top-level files of src/ that build the service from its components. */
const WIRING = '^src/[^/]+$';
/**
 * Top-level files that are not wiring but leaves every folder may use: each imports nothing of src/ (the rule
 * `neutral-leaves` holds them to it).
 * - clock.ts: what time it is, for a caller and for a test key (Clock, KeyClock): every component that tells time.
 * - turn-batch.ts: items gathered over one turn of the event loop: the server, the store, the limiter, the logs.
 * - page.ts: a page request and a page of rows: the store reads one (db/keyset.ts), the edge makes cursors of it
 *   (http/pagination.ts), and neither may import the other.
 */
const NEUTRAL = '^src/(?:clock|turn-batch|page)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A file that imports itself again through others: no order in which to read, or load, them.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'folders-one-way',
      severity: 'error',
      comment:
        'No two folders of src/ import each other, nor do three or more in a ring: a folder knows only folders ' +
        'beneath it. Folders as dependency-cruiser aggregates them (scope: folder, its documented way to find ' +
        'cycles between folders); the top-level files are held by the next two rules instead.',
      scope: 'folder',
      from: { path: '^src/[^/]+' },
      to: { circular: true },
    },
    {
      name: 'nothing-knows-the-wiring',
      severity: 'error',
      comment:
        'The wiring knows every component; a component that imported it back would know them all. What a ' +
        'component needs of the configuration is its own small type, which config.ts fills.',
      from: { path: '^src/[^/]+/' },
      to: { path: WIRING, pathNot: NEUTRAL },
    },
    {
      name: 'edge-knows-no-component',
      severity: 'error',
      comment:
        'http/ holds what every route shares, so it imports only itself, the neutral leaves and libraries; what ' +
        'it needs of a component is handed to it where the app is built (src/app.ts).',
      from: { path: '^src/http/' },
      to: { path: '^src/', pathNot: ['^src/http/', NEUTRAL] },
    },
    {
      name: 'store-knows-no-component',
      severity: 'error',
      comment:
        'db/ is the store every component reads and writes through: it imports no folder of src/, not even the edge.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: ['^src/db/', NEUTRAL] },
    },
    {
      name: 'neutral-leaves',
      severity: 'error',
      comment: 'A neutral leaf that imported anything of src/ would no longer be neutral.',
      from: { path: NEUTRAL },
      to: { path: '^src/' },
    },
  ],
  options: {
    // Type-only imports count: a folder that names another's type knows it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    includeOnly: '^src/',
    // Folder cycles are found from the folders' metrics.
    metrics: true,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
