import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { Event, WebhookTestData } from '../../src/events/schemas.js';
import { ref } from '../../src/http/schemas.js';
import { Order } from '../../src/orders/schemas.js';
import { Pet } from '../../src/pets/schemas.js';
import { VERSION_2026_11_26 } from '../../src/versions/2026-11-26.js';
import { Shapes } from '../../src/versions/shape.js';
import { changesAfter, isVersion, NEWEST_VERSION, OLDEST_VERSION, VERSIONS } from '../../src/versions/versions.js';

/**
 * Dated versions (docs/versions.md): the newest shape is the
 * code's, an older one is the newest with each later change undone.
 */
const pet = {
  id: 1,
  name: 'Rex',
  category: { id: 1, name: 'Dogs' },
  photos: [{ url: 'https://p.test/1.jpg' }],
  tags: [],
  status: 'available',
};
const order = { id: 42, petId: 1, quantity: 2, shipDate: '2026-11-27T12:00:00.000Z', status: 'delivered' };
const shapes = new Shapes([Pet, Order, Event, WebhookTestData]);

describe('versions (src/versions/)', () => {
  it('are dates, oldest first, the newest the last change', () => {
    expect(VERSIONS).toEqual([OLDEST_VERSION, VERSION_2026_11_26.version]);
    expect(NEWEST_VERSION).toBe('2026-11-26');
    for (const version of VERSIONS) expect(version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect([
      isVersion('2025-06-01'),
      isVersion('2026-11-26'),
      isVersion('2026-11-27'),
      isVersion('latest'),
      isVersion(20250601),
    ]).toEqual([true, true, false, false, false]);
  });

  it('undo the changes made after a version, newest first; none for the newest', () => {
    expect(changesAfter(OLDEST_VERSION)).toEqual([VERSION_2026_11_26]);
    expect(changesAfter(NEWEST_VERSION)).toEqual([]);
    for (const change of changesAfter(OLDEST_VERSION))
      expect(change.changes.every(({ summary, reason }) => summary && reason)).toBe(true);
  });

  it('answer the newest version as the code writes it: nothing to shape', () => {
    expect(shapes.of(Pet, NEWEST_VERSION)).toBeUndefined();
    expect(shapes.record('Order', NEWEST_VERSION)).toBeUndefined();
  });

  it("give 2025-06-01 a pet's photoUrls in photos' place, and an order its complete", () => {
    expect(shapes.of(ref(Pet), OLDEST_VERSION)!(pet)).toEqual({
      ...pet,
      photos: undefined,
      photoUrls: ['https://p.test/1.jpg'],
    });
    expect(Object.keys(shapes.of(ref(Pet), OLDEST_VERSION)!(pet) as object)).toEqual([
      'id',
      'name',
      'category',
      'photoUrls',
      'tags',
      'status',
    ]);
    expect(shapes.record('Order', OLDEST_VERSION)!(order)).toEqual({ ...order, complete: true });
    expect(shapes.record('Order', OLDEST_VERSION)!({ ...order, status: 'approved' })).toMatchObject({
      complete: false,
    });
  });

  it('find the records wherever an answer holds them: in a page, and in an event whose data is one of two kinds', () => {
    const page = Type.Object({ data: Type.Array(ref(Pet)), nextCursor: Type.Union([Type.String(), Type.Null()]) });
    expect(shapes.of(page, OLDEST_VERSION)!({ data: [pet, pet], nextCursor: null })).toEqual({
      data: [
        expect.objectContaining({ photoUrls: ['https://p.test/1.jpg'] }),
        expect.objectContaining({ photoUrls: ['https://p.test/1.jpg'] }),
      ],
      nextCursor: null,
    });
    const event = {
      id: 'evt_1',
      type: 'order.delivered',
      timestamp: order.shipDate,
      livemode: true,
      apiVersion: OLDEST_VERSION,
      data: order,
    };
    expect(shapes.record('Event', OLDEST_VERSION)!(event)).toEqual({ ...event, data: { ...order, complete: true } });
    const test = { ...event, type: 'webhook.test', data: { endpointId: 'we_1' } };
    expect(shapes.record('Event', OLDEST_VERSION)!(test)).toEqual(test);
  });

  it("turn the newest document's schemas back the same way: photoUrls a list of URLs, complete required", () => {
    const pet2025 = VERSION_2026_11_26.schemas.Pet!(JSON.parse(JSON.stringify(Pet)));
    expect(pet2025.properties!.photoUrls).toMatchObject({ type: 'array', items: { type: 'string', format: 'uri' } });
    expect(pet2025.properties!.photos).toBeUndefined();
    expect(pet2025.required).toContain('photoUrls');
    const order2025 = VERSION_2026_11_26.schemas.Order!(JSON.parse(JSON.stringify(Order)));
    expect(order2025.properties!.complete).toMatchObject({ type: 'boolean' });
    expect(order2025.required).toContain('complete');
  });
});
