import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { OLDEST_VERSION } from '../../src/versions/versions.js';
import { testApp } from '../helpers/app.js';
import { Validators } from '../helpers/conformance.js';

/**
 * The document of each version agrees with what the server answers to a request for that version
 * (the newest: ./conformance.test.ts): Prism's validating proxy and openapi-backend, over a socket.
 */
// Every operation, through Prism's proxy and openapi-backend: some seconds alone, more beside other suites.
describe('every response for the oldest version conforms to that version’s document', { timeout: 60_000 }, () => {
  it('its records, its deprecation headers, and its sunset', async () => {
    const old = await testApp({ env: { OLDEST_VERSION_SUNSET_AT: '2027-01-01T00:00:00Z' } });
    const checked = await Validators.start(old, OLDEST_VERSION);
    try {
      const key = await old.newKey({ plan: 'pro', apiVersion: OLDEST_VERSION });
      const tester = await old.newKey({ plan: 'pro', test: true });
      const as = (k: string) => ({ 'x-api-key': k, 'petstore-version': OLDEST_VERSION });
      const send = (operationId: string, options: InjectOptions) => checked.send(operationId, options);
      await send('listPets', { url: '/pets?limit=3', headers: as(key) });
      await send('getPet', { url: '/pets/1', headers: as(key) });
      await send('getPet', { url: '/pets/999', headers: as(key) });
      const placed = await send('placeOrder', {
        method: 'POST',
        url: '/store/orders',
        headers: as(key),
        payload: { petId: 1 },
      });
      expect(JSON.parse(placed.body)).toMatchObject({ complete: false });
      const id = JSON.parse(placed.body).id as number;
      await send('listOrders', { url: '/store/orders', headers: as(key) });
      const read = await send('getOrder', { url: `/store/orders/${id}`, headers: as(key) });
      expect(
        (
          await send('getOrder', {
            url: `/store/orders/${id}`,
            headers: { ...as(key), 'if-none-match': String(read.headers.etag) },
          })
        ).statusCode,
      ).toBe(304);
      await send('cancelOrder', { method: 'DELETE', url: `/store/orders/${id}`, headers: as(key) });
      const moving = JSON.parse(
        (await old.app.inject({ method: 'POST', url: '/store/orders', headers: as(tester), payload: { petId: 1 } }))
          .body,
      ).id as number;
      await send('advanceOrder', { method: 'POST', url: `/store/orders/${moving}/advance`, headers: as(tester) });
      const events = await send('listEvents', { url: '/events', headers: as(tester) });
      await send('getEvent', { url: `/events/${JSON.parse(events.body).data[0].id}`, headers: as(tester) });
      await send('getUsage', { url: '/usage', headers: as(key) });
      await send('listVersions', { url: '/versions', headers: { 'petstore-version': OLDEST_VERSION } });
      await send('listPets', { url: '/pets', headers: { ...as(tester), prefer: 'fault=429' } });
      await send('listPets', { url: '/pets', headers: as('pet_unknownunknownunknownunknownunkn') });
      // Past its sunset.
      old.clock.set('2027-01-01T00:00:00Z');
      for (const [operationId, url] of [
        ['listPets', '/pets'],
        ['getPet', '/pets/1'],
        ['listOrders', '/store/orders'],
        ['getUsage', '/usage'],
      ] as const) {
        const gone = await send(operationId, { url, headers: as(key) });
        expect(JSON.parse(gone.body).code, operationId).toBe('version-sunset');
      }
      expect(checked.mismatches).toEqual([]);
      for (const met of [
        'getPet 200',
        'getPet 404',
        'placeOrder 201',
        'getOrder 304',
        'advanceOrder 200',
        'getEvent 200',
        'listPets 429',
        'listPets 401',
        'getUsage 410',
      ])
        expect(checked.seen).toContain(met);
    } finally {
      await checked.stop();
      await old.close();
    }
  });
});
