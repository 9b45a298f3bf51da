import fastJson from 'fast-json-stringify';
import type { Clock } from '../clock.js';
import type { FastRoute } from '../http/fast-lane.js';
import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { TAG } from '../openapi/tags.js';
import { callerNow } from '../clock.js';
import type { Shapes } from '../versions/shape.js';
import type { VersionNotices } from '../versions/notices.js';
import { type Deprecation, DEPRECATIONS_PAGE_PATH, dayOrInstant, isSunset, type Notice, sunsetDay } from './deprecation.js';
import type { PetCache } from './pet-cache.js';
import { Pet, PetParams } from './schemas.js';
import { conditionalRead, etagOf } from '../http/conditional.js';

export interface GetPetDeps {
  catalogue: PetCache;
  clock: Clock;
  deprecation: Deprecation;
}

/** The operation's own deprecation, with the page that explains it. */
function noticeOf(deprecation: Deprecation): Notice {
  return { ...deprecation, page: DEPRECATIONS_PAGE_PATH };
}

/**
 * `GET /pets/{petId}` (getPet): one pet, from memory. Deprecated: every response carries the
 * deprecation headers, and from the sunset on it answers `410`.
 */
export function getPet(app: App, { catalogue, clock, deprecation }: GetPetDeps): void {
  const read = conditionalRead(
    {
      operationId: 'getPet',
      summary: 'Get a pet',
      description: `Deprecated: answers \`410\` from ${dayOrInstant(deprecation.sunsetAt)} on. Every response carries \`Deprecation\`, \`Sunset\` and \`Link\` headers. The pet stays available in \`GET /pets\`.`,
      tags: [TAG.catalogue],
      deprecated: true,
      'x-deprecated-sunset': sunsetDay(deprecation),
      params: PetParams,
    },
    ref(Pet),
    problemResponses(400, 404, 410),
  );
  app.get(
    '/pets/:petId',
    {
      ...read,
      // Every response of the operation carries its deprecation's headers, errors included (app.ts).
      config: { ...read.config, deprecation: noticeOf(deprecation) },
      preValidation: function refuseAfterSunset(request, _reply, done) {
        // In the caller's time: a test key's clock may be past the sunset (test-mode/).
        if (!isSunset(deprecation, callerNow(request.identity.clock, clock()))) return done();
        done(new ProblemError('sunset', `GET /pets/{petId} reached its sunset on ${dayOrInstant(deprecation.sunsetAt)} and no longer answers.`));
      },
    },
    // Synchronous while the pet is in memory, as it nearly always is.
    (request) => {
      const { petId } = request.params;
      const found = (pet: Pet | undefined): Pet => {
        if (!pet) throw new ProblemError('not-found', `There is no pet ${petId}.`);
        return pet;
      };
      const pet = catalogue.find(petId);
      return pet instanceof Promise ? pet.then(found) : found(pet);
    },
  );
}

/**
 * `GET /pets/{petId}` for the fast lane (http/fast-lane.ts): a pet memory holds, before its sunset,
 * serialised once per version by the serialiser Fastify compiles from the same schema (an older
 * version's shaped from it, as Fastify's are: versions/shape.ts), with its `ETag`.
 */
export function getPetFastRoute({ catalogue, clock, deprecation, notices, shapes }: GetPetDeps & { notices: VersionNotices; shapes: Shapes }): FastRoute {
  const serialize = fastJson(Pet);
  const notice = noticeOf(deprecation);
  const answers = new WeakMap<Pet, Map<string, { body: string; etag: string }>>();
  // The ids Fastify would take as they are: no leading zero, no sign, well within 2^53.
  const path = /^\/pets\/([1-9][0-9]{0,14})$/;
  return {
    url: '/pets/:petId',
    headersFor: (version) => notices.headers(version, notice),
    match: (url) => (isSunset(deprecation, clock()) ? undefined : path.exec(url)?.[1]),
    answerFor(id, _key, version) {
      const pet = catalogue.cached(Number(id));
      if (!pet) return undefined;
      let byVersion = answers.get(pet);
      if (byVersion === undefined) answers.set(pet, (byVersion = new Map()));
      let answer = byVersion.get(version);
      if (answer === undefined) {
        const shape = shapes.record('Pet', version);
        const body = shape ? JSON.stringify(shape(JSON.parse(serialize(pet)))) : serialize(pet);
        byVersion.set(version, (answer = { body, etag: etagOf(body) }));
      }
      return answer;
    },
  };
}
