import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestApp, testApp } from '../helpers/app.js';

interface Pet {
  id: number;
  name: string;
  category: { id: number; name: string };
  photos: Array<{ url: string }>;
  tags: Array<{ id: number; name: string }>;
  status: 'available' | 'pending' | 'sold';
}
interface Page {
  data: Pet[];
  nextCursor: string | null;
}
interface InputError {
  in: string;
  name: string;
  message: string;
}

const PROBLEM = 'application/problem+json';

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await testApp();
  key = await t.newKey('business');
});
afterAll(async () => {
  await t.close();
});

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

async function allPets(): Promise<Pet[]> {
  const response = await get('/pets?limit=100');
  expect(response.statusCode).toBe(200);
  const page = json<Page>(response);
  expect(page.nextCursor).toBeNull();
  return page.data;
}

/** Follows `nextCursor` until it is null; returns every id seen, in order, and the number of pages. */
async function walk(query: string): Promise<{ ids: number[]; pages: number }> {
  const ids: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const suffix: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const response = await get(`/pets?${query}${suffix}`);
    expect(response.statusCode).toBe(200);
    const page = json<Page>(response);
    ids.push(...page.data.map((p) => p.id));
    cursor = page.nextCursor;
    pages += 1;
    expect(pages).toBeLessThan(200);
  } while (cursor !== null);
  return { ids, pages };
}

/** Asserts a 400 problem whose `errors` names exactly these inputs (in any order). */
function expectInvalid(
  response: { statusCode: number; headers: Record<string, unknown>; body: string },
  expected: Array<[string, string]>,
) {
  expect(response.statusCode).toBe(400);
  expect(response.headers['content-type']).toContain(PROBLEM);
  const body = json(response as never);
  expect(body.status).toBe(400);
  expect(body.type).toBe('http://petstore.test/problems/invalid-request');
  const named = (body.errors as InputError[]).map((e) => [e.in, e.name]);
  expect(new Set(named.map((n) => n.join(' ')))).toEqual(new Set(expected.map((n) => n.join(' '))));
  for (const e of body.errors as InputError[]) expect(e.message).toEqual(expect.any(String));
}

describe('GET /pets', () => {
  it('answers a page: {data, nextCursor}', async () => {
    const response = await get('/pets');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const page = json<Page>(response);
    expect(Object.keys(page).sort()).toEqual(['data', 'nextCursor']);
    expect(Array.isArray(page.data)).toBe(true);
  });

  it('gives records with exactly the Pet fields of the newest version (the first version’s: test/versions)', async () => {
    for (const pet of await allPets()) {
      expect(Object.keys(pet).sort()).toEqual(['category', 'id', 'name', 'photos', 'status', 'tags']);
      expect(Number.isInteger(pet.id)).toBe(true);
      expect(typeof pet.name).toBe('string');
      expect(Object.keys(pet.category).sort()).toEqual(['id', 'name']);
      expect(Number.isInteger(pet.category.id)).toBe(true);
      expect(typeof pet.category.name).toBe('string');
      expect(Array.isArray(pet.photos)).toBe(true);
      for (const photo of pet.photos) expect(Object.keys(photo)).toEqual(['url']);
      for (const tag of pet.tags) {
        expect(Object.keys(tag).sort()).toEqual(['id', 'name']);
        expect(Number.isInteger(tag.id)).toBe(true);
        expect(typeof tag.name).toBe('string');
      }
      expect(['available', 'pending', 'sold']).toContain(pet.status);
    }
  });

  it('has a seeded catalogue of at least 10 pets, ids from 1, every status present', async () => {
    const pets = await allPets();
    expect(pets.length).toBeGreaterThanOrEqual(10);
    expect(pets[0]?.id).toBe(1);
    expect(new Set(pets.map((p) => p.status))).toEqual(new Set(['available', 'pending', 'sold']));
  });

  it('defaults to 20 items per page', async () => {
    const pets = await allPets();
    const page = json<Page>(await get('/pets'));
    expect(page.data).toEqual(pets.slice(0, 20));
    expect(page.nextCursor === null).toBe(pets.length <= 20);
  });

  it.each([1, 2, 3, 7, 100])('walks every pet exactly once, in ascending id order, with limit=%i', async (limit) => {
    const expected = (await allPets()).map((p) => p.id);
    const { ids, pages } = await walk(`limit=${limit}`);
    expect(ids).toEqual(expected);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(pages).toBe(Math.max(1, Math.ceil(expected.length / limit)));
  });

  it.each(['available', 'pending', 'sold'])('walks every %s pet exactly once with limit 1 and 2', async (status) => {
    const expected = (await allPets()).filter((p) => p.status === status).map((p) => p.id);
    expect(expected.length).toBeGreaterThan(0);
    expect((await walk(`status=${status}&limit=1`)).ids).toEqual(expected);
    expect((await walk(`status=${status}&limit=2`)).ids).toEqual(expected);
    const page = json<Page>(await get(`/pets?status=${status}&limit=100`));
    expect(page.data.every((p) => p.status === status)).toBe(true);
  });

  it('binds a cursor to the key, the collection and the filters that produced it: used with others it is a 400 naming cursor', async () => {
    const first = json<Page>(await get('/pets?limit=3'));
    const cursor = encodeURIComponent(first.nextCursor!);
    expect((await get(`/pets?limit=3&cursor=${cursor}`)).statusCode).toBe(200);
    expectInvalid(await get(`/pets?limit=100&status=available&cursor=${cursor}`), [['query', 'cursor']]);
    const other = await t.newKey('business');
    expectInvalid(await t.app.inject({ url: `/pets?limit=3&cursor=${cursor}`, headers: { 'x-api-key': other } }), [
      ['query', 'cursor'],
    ]);
    expectInvalid(await get(`/store/orders?cursor=${cursor}`), [['query', 'cursor']]);
    const filtered = json<Page>(await get('/pets?limit=1&status=available'));
    expect(
      (await get(`/pets?limit=100&status=available&cursor=${encodeURIComponent(filtered.nextCursor!)}`)).statusCode,
    ).toBe(200);
  });

  it.each(['garbage', 'djE6YWJj', '%%%', 'null', 'djE6Mw!!', 'djE6Mw==', 'djE6MA', 'djE6Mw'])(
    'refuses the cursor %j, which it never issued, with a 400 naming cursor',
    async (cursor) => {
      expectInvalid(await get(`/pets?cursor=${encodeURIComponent(cursor)}`), [['query', 'cursor']]);
    },
  );

  it.each(['0', '101', 'abc', '1.5', '-1'])('refuses limit=%s with a 400 naming limit', async (limit) => {
    expectInvalid(await get(`/pets?limit=${limit}`), [['query', 'limit']]);
  });

  it('accepts limit=1 and limit=100 (the bounds)', async () => {
    expect(json<Page>(await get('/pets?limit=1')).data).toHaveLength(1);
    expect((await get('/pets?limit=100')).statusCode).toBe(200);
  });

  it('refuses an unknown status with a 400 naming status', async () => {
    expectInvalid(await get('/pets?status=lost'), [['query', 'status']]);
  });

  it('lists every invalid query parameter at once', async () => {
    expectInvalid(await get('/pets?status=lost&limit=0'), [
      ['query', 'status'],
      ['query', 'limit'],
    ]);
  });
});

describe('GET /pets/{petId}', () => {
  it('answers the pet record', async () => {
    const pets = await allPets();
    const response = await get('/pets/1');
    expect(response.statusCode).toBe(200);
    expect(json<Pet>(response)).toEqual(pets[0]);
  });

  it('answers 404 problem for an unknown pet', async () => {
    const response = await get('/pets/999999');
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toContain(PROBLEM);
    expect(json(response)).toMatchObject({
      type: 'http://petstore.test/problems/not-found',
      status: 404,
      instance: '/pets/999999',
    });
  });

  it.each(['abc', '0', '-1', '1.5', '0x10', '1e3', '%201', '9223372036854775808'])(
    'refuses petId %j with a 400 naming petId',
    async (petId) => {
      const response = await get(`/pets/${petId}`);
      expectInvalid(response, [['path', 'petId']]);
    },
  );

  it('treats 9223372036854775807 (the largest int64) as a valid id of no pet: 404', async () => {
    const response = await get('/pets/9223372036854775807');
    expect(response.statusCode).toBe(404);
    expect(json(response).type).toBe('http://petstore.test/problems/not-found');
  });
});
