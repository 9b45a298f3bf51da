import { type Cursors, scopeOf } from '../http/pagination.js';
import { problemResponses } from '../http/responses.js';
import { Page, ref } from '../http/schemas.js';
import type { App } from '../http/types.js';
import { keyOf } from '../keys/identify.js';
import { TAG } from '../http/tags.js';
import type { PetsRepository } from './repository.js';
import { Pet, PetListQuery } from './schemas.js';
import { conditionalRead } from '../http/conditional.js';

/** `GET /pets` (listPets): a page of the catalogue, read from the store. */
export function listPets(app: App, { pets, cursors }: { pets: PetsRepository; cursors: Cursors }): void {
  app.get(
    '/pets',
    conditionalRead(
      {
        operationId: 'listPets',
        summary: 'List pets',
        description: 'The catalogue, in ascending id order, optionally filtered by status. Paginate with `cursor`.',
        tags: [TAG.catalogue],
        'x-stability': 'beta',
        querystring: PetListQuery,
      },
      Page(ref(Pet), 'A page of pets.'),
      problemResponses(400),
    ),
    async (request) => {
      const { status } = request.query;
      const scope = scopeOf('pets', keyOf(request).id, { status });
      return cursors.pageOf(await pets.list({ status }, cursors.pageRequest(request.query, scope)), scope);
    },
  );
}
