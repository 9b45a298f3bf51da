import { describe, expect, it } from 'vitest';
import type { Change, ChangeFeed } from '../../src/db/change-feed.js';
import { OrderPages, STAMPED_PAGE_MAX_AGE_MS } from '../../src/orders/order-pages.js';

/** A change feed whose changes the test makes. */
function feed(immediate = true) {
  const listeners: ((change: Change) => void)[] = [];
  const it = {
    immediate,
    subscribe: (listener: (change: Change) => void) => void listeners.push(listener),
    changed: (table: 'orders' | 'api_keys' | 'pets', id: string) =>
      listeners.forEach((listener) => listener({ table, id })),
    forgetAll: () => listeners.forEach((listener) => listener({ table: null, id: null })),
  };
  return it as typeof it & ChangeFeed;
}

const page = (n: number) => ({ body: `{"data":[${n}]}`, etag: `"${n}"` });

/**
 * Pages kept by the told rule (the embedded store) unless `stamped`
 * and the feed is not immediate; the test moves the clock.
 */
function pagesOf(options: { feed?: ReturnType<typeof feed>; max?: number; stamped?: boolean } = {}) {
  let now = 1_000_000;
  const pages = new OrderPages({
    feed: options.feed ?? feed(),
    max: options.max ?? 10,
    stamped: options.stamped ?? false,
    clock: () => now,
  });
  return Object.assign(pages, { advance: (ms: number) => (now += ms) });
}

/** What `find` answers, as the page it was kept as (its body and ETag). */
function found(pages: OrderPages, key: string, url: string, stamp?: string) {
  const held = pages.find(key, url, stamp);
  return held && { body: held.body, etag: held.etag };
}

describe('the pages of GET /store/orders held in memory', () => {
  it('answers a key the page it was answered for that URL, and nothing for another key or URL', () => {
    const pages = pagesOf();
    pages.keep('key_a', '/store/orders', page(1), pages.readStart(undefined));
    expect(found(pages, 'key_a', '/store/orders')).toEqual(page(1));
    expect(found(pages, 'key_b', '/store/orders')).toBeUndefined();
    expect(found(pages, 'key_a', '/store/orders?limit=1')).toBeUndefined();
  });

  it("forgets a key's pages when its orders change, and every page when anything may have changed", () => {
    const changes = feed();
    const pages = pagesOf({ feed: changes });
    for (const key of ['key_a', 'key_b']) {
      pages.keep(key, '/store/orders', page(1), pages.readStart(undefined));
      pages.keep(key, '/store/orders?limit=1', page(2), pages.readStart(undefined));
    }
    changes.changed('orders', 'key_a');
    expect(found(pages, 'key_a', '/store/orders')).toBeUndefined();
    expect(found(pages, 'key_a', '/store/orders?limit=1')).toBeUndefined();
    expect(found(pages, 'key_b', '/store/orders')).toEqual(page(1));
    expect(pages.size).toBe(2);
    changes.forgetAll();
    expect(found(pages, 'key_b', '/store/orders')).toBeUndefined();
    expect(pages.size).toBe(0);
  });

  it('does not keep a page read before a change, whatever the change was', () => {
    const changes = feed();
    const pages = pagesOf({ feed: changes });
    const before = pages.readStart(undefined);
    changes.changed('orders', 'key_a');
    pages.keep('key_a', '/store/orders', page(1), before);
    expect(found(pages, 'key_a', '/store/orders')).toBeUndefined();
    const beforeKeyChange = pages.readStart(undefined);
    changes.changed('api_keys', 'key_a');
    pages.keep('key_a', '/store/orders', page(1), beforeKeyChange);
    expect(found(pages, 'key_a', '/store/orders')).toBeUndefined();
    pages.keep('key_a', '/store/orders', page(2), pages.readStart(undefined));
    expect(found(pages, 'key_a', '/store/orders')).toEqual(page(2));
  });

  it('holds at most `max` pages: the keys read least recently leave first, and one key alone loses its oldest pages', () => {
    const pages = pagesOf({ max: 3 });
    pages.keep('key_a', '/store/orders', page(1), pages.readStart(undefined));
    pages.keep('key_b', '/store/orders', page(2), pages.readStart(undefined));
    pages.keep('key_c', '/store/orders', page(3), pages.readStart(undefined));
    // key_a is read: key_b is now the least recent, and leaves for key_d.
    found(pages, 'key_a', '/store/orders');
    pages.keep('key_d', '/store/orders', page(4), pages.readStart(undefined));
    expect(pages.size).toBe(3);
    expect(found(pages, 'key_b', '/store/orders')).toBeUndefined();
    expect(found(pages, 'key_a', '/store/orders')).toEqual(page(1));
    for (let n = 0; n < 5; n++) pages.keep('key_e', `/store/orders?cursor=${n}`, page(n), pages.readStart(undefined));
    expect(pages.size).toBe(3);
    expect([0, 1, 2, 3, 4].map((n) => found(pages, 'key_e', `/store/orders?cursor=${n}`) !== undefined)).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
    // Keeping a page again replaces it without growing.
    pages.keep('key_e', '/store/orders?cursor=4', page(9), pages.readStart(undefined));
    expect(pages.size).toBe(3);
    expect(found(pages, 'key_e', '/store/orders?cursor=4')).toEqual(page(9));
  });

  it('keeps nothing where changes made elsewhere are not heard at once and verdicts carry no stamp (PostgreSQL, limits in memory)', () => {
    const pages = pagesOf({ feed: feed(false) });
    pages.keep('key_a', '/store/orders', page(1), pages.readStart(undefined));
    expect(found(pages, 'key_a', '/store/orders')).toBeUndefined();
    expect(pages.size).toBe(0);
  });

  describe('under stamps (PostgreSQL with a limiter on Redis)', () => {
    it('serves a page only to a request that read the stamp its read began with', () => {
      const pages = pagesOf({ feed: feed(false), stamped: true });
      expect(pages.rule).toBe('stamped');
      pages.keep('key_a', '/store/orders', page(1), pages.readStart('s1'));
      expect(found(pages, 'key_a', '/store/orders', 's1')).toEqual(page(1));
      // The key was restamped by a change: the page is not served, however recent.
      expect(found(pages, 'key_a', '/store/orders', 's2')).toBeUndefined();
      expect(found(pages, 'key_a', '/store/orders', undefined)).toBeUndefined();
      expect(found(pages, 'key_b', '/store/orders', 's1')).toBeUndefined();
    });

    it('keeps a page under the stamp read before it was read, even if the key was restamped meanwhile', () => {
      const pages = pagesOf({ feed: feed(false), stamped: true });
      const since = pages.readStart('s1');
      pages.keep('key_a', '/store/orders', page(1), since);
      expect(found(pages, 'key_a', '/store/orders', 's2')).toBeUndefined();
      pages.keep('key_a', '/store/orders', page(2), pages.readStart('s2'));
      expect(found(pages, 'key_a', '/store/orders', 's2')).toEqual(page(2));
    });

    it('keeps nothing read without a stamp (the limiter decided in memory during an outage)', () => {
      const pages = pagesOf({ feed: feed(false), stamped: true });
      pages.keep('key_a', '/store/orders', page(1), pages.readStart(undefined));
      expect(pages.size).toBe(0);
    });

    it('serves a page at most a second after its read began, whatever the stamp', () => {
      const pages = pagesOf({ feed: feed(false), stamped: true });
      pages.keep('key_a', '/store/orders', page(1), pages.readStart('s1'));
      pages.advance(STAMPED_PAGE_MAX_AGE_MS);
      expect(found(pages, 'key_a', '/store/orders', 's1')).toEqual(page(1));
      pages.advance(1);
      expect(found(pages, 'key_a', '/store/orders', 's1')).toBeUndefined();
    });

    it('follows the told rule where the feed is immediate (the embedded store)', () => {
      const changes = feed();
      const pages = pagesOf({ feed: changes, stamped: true });
      expect(pages.rule).toBe('told');
      pages.keep('key_a', '/store/orders', page(1), pages.readStart(undefined));
      expect(found(pages, 'key_a', '/store/orders')).toEqual(page(1));
      changes.changed('orders', 'key_a');
      expect(found(pages, 'key_a', '/store/orders')).toBeUndefined();
    });
  });
});
