import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { json, type TestApp } from './app.js';

export interface Order {
  id: number;
  petId: number;
  quantity: number;
  shipDate: string;
  status: string;
}
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export const BASE = 'http://petstore.test';

/** The store's requests as one key sends them. */
export const ordersAs = (t: TestApp, key: string) => ({
  get: (url: string) => t.request({ method: 'GET', url, headers: { 'x-api-key': key } }),
  del: (url: string) => t.request({ method: 'DELETE', url, headers: { 'x-api-key': key } }),
  post: (payload: unknown) =>
    t.request({ method: 'POST', url: '/store/orders', headers: { 'x-api-key': key }, payload: payload as object }),
});

/** The id of the first pet of the catalogue with this status. */
export async function firstPetWith(t: TestApp, key: string, status: string): Promise<number> {
  const page = json<Page<{ id: number }>>(await ordersAs(t, key).get(`/pets?status=${status}&limit=1`));
  expect(page.data).toHaveLength(1);
  return page.data[0]!.id;
}

/** A problem of this status and type. */
export function expectProblem(
  response: Pick<LightMyRequestResponse, 'statusCode' | 'headers' | 'body'>,
  status: number,
  slug: string,
) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toContain('application/problem+json');
  expect(json(response)).toMatchObject({ type: `${BASE}/problems/${slug}`, status });
}
