import fastJson from 'fast-json-stringify';
import type { Clock } from '../clock.js';
import { ProblemError } from '../http/problems.js';
import { JSON_CONTENT_TYPE, problemResponses } from '../http/responses.js';
import { ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { TAG } from '../http/tags.js';
import { callerNow } from '../clock.js';
import type { Shapes } from '../versions/shape.js';
import { answeredInVersion } from '../versions/versioning.js';
import { type Deprecation, dayOrInstant, isSunset, sunsetDay } from '../deprecation/notices.js';
import { noticeOf } from './deprecation.js';
import type { PetCache } from './pet-cache.js';
import { Pet, PetParams } from './schemas.js';
import { conditionalRead, ETAG_FIELD, etagOf } from '../http/conditional.js';

export interface GetPetDeps {
  catalogue: PetCache;
  clock: Clock;
  deprecation: Deprecation;
  /** How an older version's records are shaped (versions/shape.ts). */
  shapes: Shapes;
}

/**
 * `GET /pets/{petId}` (getPet): one pet, from memory. Deprecated: every response carries the
 * deprecation headers, and from the sunset on it answers `410`.
 */
export function getPet(app: App, { catalogue, clock, deprecation, shapes }: GetPetDeps): void {
  const answers = petAnswers(shapes);
  const read = conditionalRead(
    {
      operationId: 'getPet',
      summary: 'Get a pet',
      description:
        `Deprecated: answers \`410\` from ${dayOrInstant(deprecation.sunsetAt)} on. Every response carries ` +
        `\`Deprecation\`, \`Sunset\` and \`Link\` headers. The pet stays available in \`GET /pets\`.`,
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
        done(
          new ProblemError(
            'sunset',
            `GET /pets/{petId} reached its sunset on ${dayOrInstant(deprecation.sunsetAt)} and no longer answers.`,
          ),
        );
      },
    },
    // Synchronous while the pet is in memory, as it nearly always is.
    (request, reply) => {
      const { petId } = request.params;
      const found = (pet: Pet | undefined): string => {
        if (!pet) throw new ProblemError('not-found', `There is no pet ${petId}.`);
        const { body, etag } = answers(pet, request.apiVersion);
        answeredInVersion(request);
        reply.header(ETAG_FIELD, etag).type(JSON_CONTENT_TYPE);
        return body;
      };
      const pet = catalogue.find(petId);
      return pet instanceof Promise ? pet.then(found) : found(pet);
    },
  );
}

/**
 * A pet's answer in a version, its body and `ETag`, made once per pet record and version: a record is
 * never changed (a change is a new record from the store, db/row-cache.ts), so neither is its answer.
 * Serialised by the schema's own serialiser, an older version's shaped from the newest's, as any other
 * route's answer is (versions/versioning.ts).
 */
function petAnswers(shapes: Shapes) {
  const serialize = fastJson(Pet);
  const answers = new WeakMap<Pet, Map<string, { body: string; etag: string }>>();
  return (pet: Pet, version: string): { body: string; etag: string } => {
    let byVersion = answers.get(pet);
    if (byVersion === undefined) answers.set(pet, (byVersion = new Map()));
    let answer = byVersion.get(version);
    if (answer === undefined) {
      const shape = shapes.record('Pet', version);
      const body = shape ? JSON.stringify(shape(JSON.parse(serialize(pet)))) : serialize(pet);
      byVersion.set(version, (answer = { body, etag: etagOf(body) }));
    }
    return answer;
  };
}
