import type { JsonSchema, VersionChange } from './change.js';

/**
 * `2026-11-26`: a pet's photos become objects, and an order loses `complete`. Both break a client
 * generated for `2025-06-01`: a field it reads is gone.
 */
export const VERSION_2026_11_26: VersionChange = {
  version: '2026-11-26',
  changes: [
    {
      summary: 'Pet: `photoUrls` (a list of URLs) is replaced by `photos`, a list of objects `{ "url": … }`.',
      reason: 'A photo can now gain members (a caption, a size) without another breaking change.',
    },
    {
      summary: 'Order: `complete` is removed.',
      reason: 'It repeated `status`: an order is complete exactly when its status is `delivered`. Read `status`.',
    },
  ],
  records: {
    Pet: (pet) =>
      replaced<unknown>(pet, 'photos', 'photoUrls', (photos) =>
        (photos as Array<{ url: string }>).map((photo) => photo.url),
      ),
    Order: (order) => ({ ...order, complete: order.status === 'delivered' }),
  },
  schemas: {
    Pet: (pet) => ({
      ...pet,
      properties: replaced<JsonSchema>(pet.properties!, 'photos', 'photoUrls', (photos) => ({
        type: 'array',
        items: (photos.items as JsonSchema).properties!.url,
        maxItems: photos.maxItems,
      })),
      required: pet.required!.map((name) => (name === 'photos' ? 'photoUrls' : name)),
    }),
    Order: (order) => ({
      ...order,
      properties: {
        ...order.properties,
        complete: { type: 'boolean', description: 'True exactly when the order is `delivered`.' },
      },
      required: [...order.required!, 'complete'],
    }),
  },
};

/** `record` with the member `name` replaced, in its place, by `newName` holding `change` of its value. */
function replaced<T>(
  record: Record<string, T>,
  name: string,
  newName: string,
  change: (value: T) => T,
): Record<string, T> {
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => (key === name ? [newName, change(value)] : [key, value])),
  );
}
