import type { ChangeFeed } from '../db/change-feed.js';

/** A page of `GET /store/orders` as it was answered: its body and its `ETag`. */
export interface PageAnswer {
  body: string;
  etag: string;
}

export interface OrderPagesOptions {
  feed: ChangeFeed;
  /** The most pages held, over all keys; the keys read least recently leave first, with all their pages. */
  max: number;
}

/**
 * The pages of `GET /store/orders` a key was answered, by key, request URL and version, so that the fast lane
 * (http/fast-lane.ts) answers a key's repeated reads of its orders from memory.
 *
 * Only where every change to orders is heard before the next request (`feed.immediate`: the embedded
 * store). There this process's own writes are told by the repository before it answers, and another
 * process's commits by the feed's check, which every request makes first (db/change-feed.ts); a
 * change forgets the key's pages, or all of them. On PostgreSQL another instance's order would go
 * unseen for up to the feed's delay, and a client that placed an order there must find it here at
 * once: no page is kept.
 */
export class OrderPages {
  /** Pages by key id, then by URL; the Map's order is the keys' order of use, least recent first. */
  readonly #byKey = new Map<string, Map<string, PageAnswer>>();
  #size = 0;
  /** Raised by every change heard: a page read before a change may not be kept. */
  #generation = 0;
  /** Whether pages are kept at all: only where the feed is `immediate`. */
  readonly keeps: boolean;
  readonly #max: number;

  constructor({ feed, max }: OrderPagesOptions) {
    this.keeps = feed.immediate;
    this.#max = max;
    feed.subscribe((change) => {
      this.#generation++;
      if (change.table === null) this.#clear();
      else if (change.table === 'orders') this.#forget(change.id);
    });
  }

  get size(): number {
    return this.#size;
  }

  /** What a page read beginning now must hand back to `keep`. */
  generation(): number {
    return this.#generation;
  }

  /** The page answered to this key for this URL, if memory holds it. */
  find(keyId: string, url: string): PageAnswer | undefined {
    const pages = this.#byKey.get(keyId);
    const page = pages?.get(url);
    if (page === undefined) return undefined;
    // Most recently used key goes last.
    this.#byKey.delete(keyId);
    this.#byKey.set(keyId, pages!);
    return page;
  }

  /** Keeps a page read from the store since `generation()` said `generation`, unless anything changed since. */
  keep(keyId: string, url: string, page: PageAnswer, generation: number): void {
    if (!this.keeps || generation !== this.#generation) return;
    const pages = this.#byKey.get(keyId) ?? new Map<string, PageAnswer>();
    this.#byKey.delete(keyId);
    this.#byKey.set(keyId, pages);
    if (!pages.has(url)) this.#size++;
    pages.set(url, page);
    for (const [oldest, its] of this.#byKey) {
      if (this.#size <= this.#max) break;
      if (oldest !== keyId) {
        this.#forget(oldest);
        continue;
      }
      // Only this key is left, with more pages than the bound: its oldest go.
      for (const older of its.keys()) {
        if (this.#size <= this.#max) break;
        its.delete(older);
        this.#size--;
      }
    }
  }

  #forget(keyId: string): void {
    const pages = this.#byKey.get(keyId);
    if (pages === undefined) return;
    this.#byKey.delete(keyId);
    this.#size -= pages.size;
  }

  #clear(): void {
    this.#byKey.clear();
    this.#size = 0;
  }
}
