import Type, { type Static } from 'typebox';
import { Int64Id, ListQuery, StringEnum } from '../http/schemas.js';

export const PET_STATUSES = ['available', 'pending', 'sold'] as const;

const Named = (what: string) =>
  Type.Object(
    { id: Type.Integer({ format: 'int64', minimum: 1 }), name: Type.String({ maxLength: 100 }) },
    { additionalProperties: false, description: what },
  );

export const Pet = Type.Object(
  {
    id: Int64Id('The pet id.'),
    name: Type.String({ maxLength: 100, examples: ['Rex'] }),
    category: Named('The kind of pet.'),
    photos: Type.Array(
      Type.Object(
        { url: Type.String({ format: 'uri', maxLength: 2048 }) },
        { additionalProperties: false, description: 'A photo of the pet.' },
      ),
      {
        maxItems: 20,
      },
    ),
    tags: Type.Array(Named('A tag.'), { maxItems: 20 }),
    status: StringEnum(PET_STATUSES, { description: 'Whether the pet can be ordered: only `available` pets can.' }),
  },
  { $id: 'Pet', additionalProperties: false, description: 'A pet of the catalogue.' },
);
export type Pet = Static<typeof Pet>;

export const PetParams = Type.Object({ petId: Int64Id('The id of the pet.') });

export const PetListQuery = ListQuery(PET_STATUSES, 'pets');
