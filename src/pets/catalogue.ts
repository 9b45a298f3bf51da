import type { Pet } from './schemas.js';

const TAG_IDS: Record<string, number> = {};

/** The catalogue seeded on first start: ids follow this order from 1, and every status is present. */
export const PET_CATALOGUE: ReadonlyArray<Omit<Pet, 'id'>> = [
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

function pet(name: string, categoryId: number, categoryName: string, status: Pet['status'], tags: string[]): Omit<Pet, 'id'> {
  return {
    name,
    category: { id: categoryId, name: categoryName },
    photos: [{ url: `https://example.com/photos/${name.toLowerCase()}.jpg` }],
    tags: tags.map((tag) => ({ id: (TAG_IDS[tag] ??= Object.keys(TAG_IDS).length + 1), name: tag })),
    status,
  };
}
