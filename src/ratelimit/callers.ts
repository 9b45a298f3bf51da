import type { LimiterStore } from './store.js';

/**
 * Who the limiter counts a request to, as the stores name it: written here and nowhere else, so that
 * the admin API finds a key's ban where the limit step put it.
 */

/** A valid key: its own caller, whatever address it comes from. */
export function keyCaller(keyId: string): string {
  return `key:${keyId}`;
}

/**
 * Restamps keys in `store` (`LimiterStore.restamp`): what orders/moves.ts calls once a change of their
 * orders is committed. Nothing where the store's feed tells every change at once (the embedded store:
 * there pages are told, not stamped: orders/order-pages.ts) or where verdicts carry no stamp.
 */
export function restampKeys(
  store: Pick<LimiterStore, 'restamp' | 'stamps'>,
  feed: { immediate: boolean },
): (keyIds: readonly string[]) => Promise<void> {
  if (feed.immediate || !store.stamps) return async () => {};
  return (keyIds) => store.restamp(keyIds.map(keyCaller));
}

/** A client address without a valid key (no key, a bad one, or one that could not be checked). */
export function addressCaller(address: string): string {
  return `ip:${address}`;
}

/**
 * The throttle of the paths that count nothing (the index, the docs, the document, `/usage`, a test
 * key's clock…) for a caller: a key's own where a valid key is sent, else its address's.
 */
export function uncountedCaller(caller: string): string {
  return `uncounted:${caller}`;
}
