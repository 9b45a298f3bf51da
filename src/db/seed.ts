/**
 * The seed: the pet catalogue the store is given at its first start (migration `002_pet_catalogue`,
 * ./migrations.ts). Pets are the operator's to change afterwards; the service only reads them (pets/).
 */

/** A pet of the seed, as the `pets` row's columns hold it (pets/schemas.ts `Pet`, less its id). */
export interface SeedPet {
  name: string;
  category: { id: number; name: string };
  photos: { url: string }[];
  tags: { id: number; name: string }[];
  status: 'available' | 'pending' | 'sold';
}

const TAG_IDS: Record<string, number> = {};

/** The catalogue seeded on first start: ids follow this order from 1, and every status is present. */
export const PET_CATALOGUE: readonly SeedPet[] = [
  pet('Rex', 1, 'Dogs', 'available', ['friendly', 'large']),
  pet('Mittens', 2, 'Cats', 'available', ['indoor']),
  pet('Goldie', 3, 'Fish', 'available', ['freshwater']),
  pet('Polly', 4, 'Birds', 'pending', ['talkative']),
  pet('Biscuit', 1, 'Dogs', 'sold', ['small']),
  pet('Shadow', 2, 'Cats', 'available', ['outdoor', 'shy']),
  pet('Nibbles', 5, 'Rodents', 'available', ['small']),
  pet('Sunny', 4, 'Birds', 'sold', ['singer']),
  pet('Bruno', 1, 'Dogs', 'pending', ['guard']),
  pet('Luna', 2, 'Cats', 'available', ['playful']),
  pet('Shelly', 6, 'Reptiles', 'available', ['slow']),
  pet('Bubbles', 3, 'Fish', 'pending', ['saltwater']),
  pet('Coco', 5, 'Rodents', 'available', ['fluffy']),
  pet('Ziggy', 6, 'Reptiles', 'sold', ['climber']),
  pet('Maple', 1, 'Dogs', 'available', ['puppy']),
];

function pet(
  name: string,
  categoryId: number,
  categoryName: string,
  status: SeedPet['status'],
  tags: string[],
): SeedPet {
  return {
    name,
    category: { id: categoryId, name: categoryName },
    photos: [{ url: `https://example.com/photos/${name.toLowerCase()}.jpg` }],
    tags: tags.map((tag) => ({ id: (TAG_IDS[tag] ??= Object.keys(TAG_IDS).length + 1), name: tag })),
    status,
  };
}
