import { COUNTS_NOTHING } from '../http/stages.js';
import Type from 'typebox';
import { htmlPage, inlineCode } from '../http/html-page.js';
import { problemResponses } from '../http/responses.js';
import { NoQuery, ref, StringEnum } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { TAG } from '../http/tags.js';
import { dayOrInstant, type Notice } from '../deprecation/notices.js';
import { noticeOf, VERSIONS_PAGE_PATH } from './notices.js';
import { CHANGES, NEWEST_VERSION, OLDEST_VERSION, VERSION_HEADER, VERSION_PATTERN, VERSIONS } from './versions.js';

export const Version = Type.Object(
  {
    version: Type.String({
      pattern: VERSION_PATTERN,
      maxLength: 10,
      description: 'The version, a date: send it in `Petstore-Version`.',
    }),
    status: StringEnum(['current', 'deprecated'], { description: '`deprecated`: it stops answering at `sunsetAt`.' }),
    sunsetAt: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 30,
        description: 'When a deprecated version stops answering (`410`).',
      }),
    ),
    changes: Type.Array(
      Type.Object(
        { summary: Type.String({ maxLength: 1_000 }), reason: Type.String({ maxLength: 1_000 }) },
        { additionalProperties: false, description: 'A change this version made, and why.' },
      ),
      { maxItems: 100, description: 'What this version changed from the one before (none for the first).' },
    ),
  },
  { $id: 'Version', additionalProperties: false, description: 'A version of the API.' },
);

export const VersionList = Type.Object(
  { data: Type.Array(ref(Version), { maxItems: 100, description: 'Every version, oldest first.' }) },
  { additionalProperties: false },
);

/** What `GET /versions` answers: fixed for the life of the process. */
function versionList(oldest: Notice) {
  return {
    data: VERSIONS.map((version) => {
      const notice = noticeOf(version, oldest);
      return {
        version,
        status: notice ? ('deprecated' as const) : ('current' as const),
        ...(notice ? { sunsetAt: notice.sunsetAt.toISOString() } : {}),
        changes: [...(CHANGES.find((change) => change.version === version)?.changes ?? [])],
      };
    }),
  };
}

/** `GET /versions` (listVersions), and the changelog page the deprecated version's `Link` names. */
export function versionsRoutes(app: App, { oldest }: { oldest: Notice }): void {
  const list = versionList(oldest);
  app.get(
    '/versions',
    {
      config: COUNTS_NOTHING,
      schema: {
        operationId: 'listVersions',
        summary: 'The versions of the API',
        description:
          `Every version, oldest first, with what each changed and why. Needs no key and counts nothing (the ` +
          `throttle of what counts nothing applies, per key or per address). A request names its version in ` +
          `\`${VERSION_HEADER}\`; without it, it gets its key's pinned version (keys made before versions: ` +
          `${OLDEST_VERSION}; new keys: the newest).`,
        tags: [TAG.versions],
        'x-stability': 'beta',
        security: [],
        querystring: NoQuery,
        response: { 200: VersionList, ...problemResponses(400, 429) },
      },
    },
    async () => list,
  );
  const html = htmlPage('Versions', changelog(list.data, oldest));
  app.get(VERSIONS_PAGE_PATH, { config: COUNTS_NOTHING, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(html),
  );
}

function changelog(versions: ReturnType<typeof versionList>['data'], oldest: Notice): string {
  const sections = [...versions].reverse().map(({ version, status, changes }) => {
    const state =
      status === 'deprecated'
        ? `Deprecated since ${dayOrInstant(oldest.deprecatedAt)}; from ${dayOrInstant(oldest.sunsetAt)} on its ` +
          `requests are answered <code>410</code> (<code>version-sunset</code>).`
        : version === NEWEST_VERSION
          ? 'The newest: new keys are pinned to it.'
          : 'Current.';
    const list = changes.length
      ? `<ul>${changes.map((change) => `<li>${inlineCode(change.summary)} <em>Why:</em> ${inlineCode(change.reason)}</li>`).join('')}</ul>`
      : '<p>The first version: the classic Petstore records (keys made before versions are pinned to it).</p>';
    return `<h2 id="v${version}"><code>${version}</code></h2>\n<p>${state}</p>\n${list}`;
  });
  return (
    `<p>Send <code>${VERSION_HEADER}: YYYY-MM-DD</code> to choose a version; without it a request gets its key's ` +
    `pinned version (<code>petstore keys set-version</code> changes it). Every response names its version in ` +
    `<code>${VERSION_HEADER}</code>.</p>\n${sections.join('\n')}`
  );
}
