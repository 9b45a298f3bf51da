import { describe, expect, it } from 'vitest';
import type { Change, ChangeFeed } from '../../src/db/change-feed.js';
import { OrderPages } from '../../src/orders/order-pages.js';

/** A change feed whose changes the test makes. */
function feed(immediate = true) {
  const listeners: ((change: Change) => void)[] = [];
  const it = {
    immediate,
    subscribe: (listener: (change: Change) => void) => void listeners.push(listener),
    changed: (table: 'orders' | 'api_keys' | 'pets', id: string) => listeners.forEach((listener) => listener({ table, id })),
    forgetAll: () => listeners.forEach((listener) => listener({ table: null, id: null })),
  };
  return it as typeof it & ChangeFeed;
}

const page = (n: number) => ({ body: `{"data":[${n}]}`, etag: `"${n}"` });

describe('the pages of GET /store/orders held in memory', () => {
  it('answers a key the page it was answered for that URL, and nothing for another key or URL', () => {
    const pages = new OrderPages({ feed: feed(), max: 10 });
    pages.keep('key_a', '/store/orders', page(1), pages.generation());
    expect(pages.find('key_a', '/store/orders')).toEqual(page(1));
    expect(pages.find('key_b', '/store/orders')).toBeUndefined();
    expect(pages.find('key_a', '/store/orders?limit=1')).toBeUndefined();
  });

  it("forgets a key's pages when its orders change, and every page when anything may have changed", () => {
    const changes = feed();
    const pages = new OrderPages({ feed: changes, max: 10 });
    for (const key of ['key_a', 'key_b']) {
      pages.keep(key, '/store/orders', page(1), pages.generation());
      pages.keep(key, '/store/orders?limit=1', page(2), pages.generation());
    }
    changes.changed('orders', 'key_a');
    expect(pages.find('key_a', '/store/orders')).toBeUndefined();
    expect(pages.find('key_a', '/store/orders?limit=1')).toBeUndefined();
    expect(pages.find('key_b', '/store/orders')).toEqual(page(1));
    expect(pages.size).toBe(2);
    changes.forgetAll();
    expect(pages.find('key_b', '/store/orders')).toBeUndefined();
    expect(pages.size).toBe(0);
  });

  it('does not keep a page read before a change, whatever the change was', () => {
    const changes = feed();
    const pages = new OrderPages({ feed: changes, max: 10 });
    const before = pages.generation();
    changes.changed('orders', 'key_a');
    pages.keep('key_a', '/store/orders', page(1), before);
    expect(pages.find('key_a', '/store/orders')).toBeUndefined();
    const beforeKeyChange = pages.generation();
    changes.changed('api_keys', 'key_a');
    pages.keep('key_a', '/store/orders', page(1), beforeKeyChange);
    expect(pages.find('key_a', '/store/orders')).toBeUndefined();
    pages.keep('key_a', '/store/orders', page(2), pages.generation());
    expect(pages.find('key_a', '/store/orders')).toEqual(page(2));
  });

  it('holds at most `max` pages: the keys read least recently leave first, and one key alone loses its oldest pages', () => {
    const pages = new OrderPages({ feed: feed(), max: 3 });
    pages.keep('key_a', '/store/orders', page(1), pages.generation());
    pages.keep('key_b', '/store/orders', page(2), pages.generation());
    pages.keep('key_c', '/store/orders', page(3), pages.generation());
    // key_a is read: key_b is now the least recent, and leaves for key_d.
    pages.find('key_a', '/store/orders');
    pages.keep('key_d', '/store/orders', page(4), pages.generation());
    expect(pages.size).toBe(3);
    expect(pages.find('key_b', '/store/orders')).toBeUndefined();
    expect(pages.find('key_a', '/store/orders')).toEqual(page(1));
    for (let n = 0; n < 5; n++) pages.keep('key_e', `/store/orders?cursor=${n}`, page(n), pages.generation());
    expect(pages.size).toBe(3);
    expect([0, 1, 2, 3, 4].map((n) => pages.find('key_e', `/store/orders?cursor=${n}`) !== undefined)).toEqual([false, false, true, true, true]);
    // Keeping a page again replaces it without growing.
    pages.keep('key_e', '/store/orders?cursor=4', page(9), pages.generation());
    expect(pages.size).toBe(3);
    expect(pages.find('key_e', '/store/orders?cursor=4')).toEqual(page(9));
  });

  it('keeps nothing where changes made elsewhere are not heard at once (PostgreSQL)', () => {
    const pages = new OrderPages({ feed: feed(false), max: 10 });
    pages.keep('key_a', '/store/orders', page(1), pages.generation());
    expect(pages.find('key_a', '/store/orders')).toBeUndefined();
    expect(pages.size).toBe(0);
  });
});
