/** `Deprecation`/`Sunset` on `getPet`: one notice per operation per client, with the sunset date. */
import { afterEach, expect, it, vi } from 'vitest';
import { type DeprecationNotice, PetstoreClient } from '../../client/index.js';
import { type TestApp, testApp } from '../helpers/app.js';
import { clientOptions } from './harness.js';

let t: TestApp;
afterEach(async () => {
  vi.restoreAllMocks();
  await t.close();
});

it('calls the hook once per operation, with the deprecation and sunset dates and the link', async () => {
  t = await testApp();
  const key = await t.newKey('pro');
  const notices: DeprecationNotice[] = [];
  const client = new PetstoreClient({ ...clientOptions(t.app, t.clock, key), onDeprecation: (n) => notices.push(n) });
  for (const id of [1, 2, 999_999]) await client.getPet(id).catch(() => undefined);
  await client.listPets();
  expect(notices).toEqual([
    {
      operation: 'getPet',
      deprecation: new Date('2026-01-01T00:00:00Z'),
      sunset: new Date('2027-07-01T00:00:00Z'),
      link: 'http://petstore.test/docs/deprecations',
    },
  ]);
});

it('by default writes one line to stderr, once per client', async () => {
  t = await testApp();
  const key = await t.newKey('pro');
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  const { onDeprecation: _printed, ...options } = clientOptions(t.app, t.clock, key);
  const client = new PetstoreClient(options);
  await client.getPet(1);
  await client.getPet(1);
  expect(warn).toHaveBeenCalledTimes(1);
  const [line] = warn.mock.calls[0]!;
  expect(line).toMatch(
    /^petstore client: getPet is deprecated; it stops answering on 2027-07-01T00:00:00\.000Z \(see \S+\)$/,
  );
  await new PetstoreClient(options).getPet(1);
  expect(warn).toHaveBeenCalledTimes(2);
});
