import type { Clock } from '../clock.js';
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
  /**
   * Whether the limiter's verdicts carry each key's stamp (a limiter on Redis: `Verdict.stamp`, which
   * every committed change of a key's orders renews before it is answered: ./moves.ts).
   */
  stamped: boolean;
  clock: Clock;
}

/**
 * The longest a page is served under its stamp: the bound on what a
 * change Redis never took can leave (ratelimit/failover-store.ts).
 */
export const STAMPED_PAGE_MAX_AGE_MS = 1_000;

/** When a page's read began: the feed's generation, the key's stamp, the instant. */
export interface ReadStart {
  readonly generation: number;
  readonly stamp: string | undefined;
  readonly at: number;
}

interface Held extends PageAnswer {
  readonly stamp: string | undefined;
  readonly at: number;
}

/**
 * The pages of `GET /store/orders` a key was answered, by key, request URL and version, so that a key's
 * repeated reads of its orders are answered from memory (./list.ts). A page read before a change of the key's orders is
 * never served after that change is answered, on any instance. Two rules make it so, by where the service runs:
 *
 * - Told: where every change to orders is heard before the next request (`feed.immediate`: the embedded
 *   store). There this process's own writes are told by the repository before it answers, and another
 *   process's commits by the feed's check, which every request makes first (db/change-feed.ts); a
 *   change forgets the key's pages, or all of them, and a page whose read began before a change is not
 *   kept.
 * - Stamped: instances on PostgreSQL with a limiter on Redis. Every committed change of a key's orders
 *   gives the key a new stamp in Redis before it is answered (./moves.ts), and every request of the key
 *   reads the stamp in the limiter's one round trip, before its route reads anything. A page is kept
 *   under the stamp its read began with and served only to a request that read that very stamp: a
 *   request sent after a change was answered reads the new one. A stamp Redis did not take (an outage)
 *   is bounded by `STAMPED_PAGE_MAX_AGE_MS`.
 *
 * Elsewhere (PostgreSQL with limits in memory: instances that could not hear each other at once) no
 * page is kept.
 */
export class OrderPages {
  /** Pages by key id, then by URL; the Map's order is the keys' order of use, least recent first. */
  readonly #byKey = new Map<string, Map<string, Held>>();
  #size = 0;
  /** Raised by every change heard: a page read before a change may not be kept (told). */
  #generation = 0;
  /** Which rule keeps pages (above), or none. */
  readonly rule: 'told' | 'stamped' | null;
  readonly #stamped: boolean;
  readonly #max: number;
  readonly #clock: Clock;

  constructor({ feed, max, stamped, clock }: OrderPagesOptions) {
    this.rule = feed.immediate ? 'told' : stamped ? 'stamped' : null;
    this.#stamped = this.rule === 'stamped';
    this.#max = max;
    this.#clock = clock;
    feed.subscribe((change) => {
      this.#generation++;
      if (change.table === null) this.#clear();
      else if (change.table === 'orders') this.#forget(change.id);
    });
  }

  get size(): number {
    return this.#size;
  }

  /** What a page read beginning now, by a request that read `stamp` (`Verdict.stamp`), hands back to `keep`. */
  readStart(stamp: string | undefined): ReadStart {
    return { generation: this.#generation, stamp, at: this.#clock() };
  }

  /** The page answered to this key for this URL, if memory holds one a request that read `stamp` may be served. */
  find(keyId: string, url: string, stamp: string | undefined): PageAnswer | undefined {
    const pages = this.#byKey.get(keyId);
    const page = pages?.get(url);
    if (page === undefined) return undefined;
    if (this.#stamped && (page.stamp !== stamp || this.#clock() - page.at > STAMPED_PAGE_MAX_AGE_MS)) return undefined;
    // Most recently used key goes last.
    this.#byKey.delete(keyId);
    this.#byKey.set(keyId, pages!);
    return page;
  }

  /** Keeps a page whose read began at `since`, unless a change was told since (told), or under its stamp (stamped). */
  keep(keyId: string, url: string, page: PageAnswer, since: ReadStart): void {
    if (this.rule === null || (this.#stamped ? since.stamp === undefined : since.generation !== this.#generation))
      return;
    const pages = this.#byKey.get(keyId) ?? new Map<string, Held>();
    this.#byKey.delete(keyId);
    this.#byKey.set(keyId, pages);
    if (!pages.has(url)) this.#size++;
    pages.set(url, { body: page.body, etag: page.etag, stamp: since.stamp, at: since.at });
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
