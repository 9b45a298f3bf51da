import fastJson from 'fast-json-stringify';
import type { Clock } from '../clock.js';
import type { FastRoute } from '../http/fast-lane.js';
import { pageRequest } from '../http/pagination.js';
import { ProblemError } from '../http/problems.js';
import { problemResponses } from '../http/responses.js';
import { Page, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { TAG } from '../openapi/tags.js';
import { dayOrInstant, deprecationHeaders, isSunset, sunsetDay, type Deprecation } from './deprecation.js';
import type { PetCache } from './pet-cache.js';
import type { PetsRepository } from './repository.js';
import { Pet, PetListQuery, PetParams } from './schemas.js';

export interface PetsRouteDeps {
  pets: PetsRepository;
  catalogue: PetCache;
  clock: Clock;
  publicUrl: string;
  deprecation: Deprecation;
}

export function petsRoutes(app: App, { pets, catalogue, clock, publicUrl, deprecation }: PetsRouteDeps): void {
  app.get(
    '/pets',
    {
      schema: {
        operationId: 'listPets',
        summary: 'List pets',
        description: 'The catalogue, in ascending id order, optionally filtered by status. Paginate with `cursor`.',
        tags: [TAG.catalogue],
        'x-stability': 'beta',
        querystring: PetListQuery,
        response: { 200: Page(ref(Pet), 'A page of pets.'), ...problemResponses(400) },
      },
    },
    async (request) => pets.list({ status: request.query.status }, pageRequest(request.query)),
  );

  const headers = deprecationHeaders(deprecation, publicUrl);
  app.get(
    '/pets/:petId',
    {
      schema: {
        operationId: 'getPet',
        summary: 'Get a pet',
        description: `Deprecated: answers \`410\` from ${dayOrInstant(deprecation.sunsetAt)} on. Every response carries \`Deprecation\`, \`Sunset\` and \`Link\` headers. The pet stays available in \`GET /pets\`.`,
        tags: [TAG.catalogue],
        deprecated: true,
        'x-deprecated-sunset': sunsetDay(deprecation),
        params: PetParams,
        response: { 200: ref(Pet), ...problemResponses(400, 404, 410) },
      },
      // Every response of the operation carries the headers, errors included.
      onSend: (_request, reply, payload, done) => {
        reply.headers(headers);
        done(null, payload);
      },
      preValidation: (_request, _reply, done) => {
        if (!isSunset(deprecation, clock())) return done();
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
 * serialised once by the serialiser Fastify compiles from the same schema.
 */
export function getPetFastRoute({ catalogue, clock, publicUrl, deprecation }: Omit<PetsRouteDeps, 'pets'>): FastRoute {
  const serialize = fastJson(Pet);
  const bodies = new WeakMap<Pet, string>();
  // The ids Fastify would take as they are: no leading zero, no sign, well within 2^53.
  const path = /^\/pets\/([1-9][0-9]{0,14})$/;
  return {
    url: '/pets/:petId',
    headers: deprecationHeaders(deprecation, publicUrl),
    match: (url) => (isSunset(deprecation, clock()) ? undefined : path.exec(url)?.[1]),
    bodyFor(id) {
      const pet = catalogue.cached(Number(id));
      if (!pet) return undefined;
      let body = bodies.get(pet);
      if (body === undefined) bodies.set(pet, (body = serialize(pet)));
      return body;
    },
  };
}
