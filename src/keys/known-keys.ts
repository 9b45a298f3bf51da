import type { Clock } from '../clock.js';
import type { ChangeFeed } from '../db/change-feed.js';
import type { KeysRepository } from './repository.js';

/** Digests read per query while the set is (re)built, so that a million keys never hold the event loop. */
const PAGE = 10_000;
/** Bits per key at least (about 0.06 % of unknown keys pass, with seven probes), and never fewer than 1 MB of them. */
const BITS_PER_KEY = 16;
const MIN_BITS = 2 ** 23;
const RETRY_MS = 1_000;
/** Probes per key: seven 32-bit slices of its SHA-256, which is already uniform. */
const PROBES = 7;

/**
 * Which keys exist, as this instance knows it: a Bloom filter over every key's SHA-256, so that a key
 * nobody created is refused without a store query (a guess passes about once in 1,600, and is then
 * looked up as before). Kept current by the change feed as every cached key is (db/change-feed.ts): a
 * key created by this instance is heard before `create` returns, one created elsewhere within the
 * feed's delay; until its digest is read, and whenever the feed cannot vouch for what the filter was
 * built from (it was built too long ago while the notification channel is down, or anything may have
 * changed), every key may exist and is looked up. Keys are never deleted, so the filter only grows;
 * once it holds more than its size was meant for, it is built again, larger.
 */
export class KnownKeys {
  #bits: Uint32Array | null = null;
  #count = 0;
  /** When the current build began: the feed vouches for the filter from then on. */
  #builtFrom = 0;
  /** Digests being read (one new key each, or a whole build): while any is, every key may exist. */
  #reading = 0;
  /** Raised by every build, so that a build overtaken by another drops what it read. */
  #generation = 0;
  /** Digests of keys heard of while a build reads (its pages may have passed them); null while none does. */
  #heard: string[] | null = null;
  #failedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly keys: Pick<KeysRepository, 'hashesAfter' | 'hashOf' | 'count'>,
    private readonly feed: Pick<ChangeFeed, 'subscribe' | 'trusts'>,
    private readonly clock: Clock,
  ) {
    feed.subscribe((change) => {
      if (change.table === null) this.#build();
      else if (change.table === 'api_keys') this.#readOne(change.id);
    });
    this.#build();
  }

  /** False only when no key has this digest; true when it may (or the filter cannot say). */
  mayExist(hash: string): boolean {
    const bits = this.#bits;
    if (bits === null) {
      // The last build failed (the store could not be read): tried again, once a second at most.
      if (this.#reading === 0 && this.clock() - this.#failedAt >= RETRY_MS) this.#build();
      return true;
    }
    if (this.#reading > 0 || !this.feed.trusts(this.#builtFrom, this.clock())) return true;
    return holds(bits, hash);
  }

  /** Bytes the filter holds. */
  get bytes(): number {
    return this.#bits?.byteLength ?? 0;
  }

  #build(): void {
    const generation = ++this.#generation;
    const from = this.clock();
    this.#heard = [];
    this.#reading++;
    this.#readAll().then(
      ({ bits, count }) => {
        this.#reading--;
        if (generation !== this.#generation) return;
        const heard = this.#heard ?? [];
        for (const hash of heard) add(bits, hash);
        [this.#bits, this.#count, this.#builtFrom, this.#heard] = [bits, count + heard.length, from, null];
      },
      () => {
        this.#reading--;
        // Unknown: nothing is refused from memory until a build succeeds (the next change, or the next key).
        if (generation === this.#generation) [this.#bits, this.#heard, this.#failedAt] = [null, null, this.clock()];
      },
    );
  }

  async #readAll(): Promise<{ bits: Uint32Array; count: number }> {
    // Sized first and filled page by page: the digests are never all held at once.
    const bits = new Uint32Array(sizeFor(await this.keys.count()) / 32);
    let count = 0;
    for (let after = ''; ;) {
      const page = await this.keys.hashesAfter(after, PAGE);
      for (const hash of page) add(bits, hash);
      count += page.length;
      if (page.length < PAGE) return { bits, count };
      after = page[page.length - 1]!;
    }
  }

  #readOne(id: string): void {
    const generation = this.#generation;
    this.#reading++;
    this.keys.hashOf(id).then(
      (hash) => {
        this.#reading--;
        // A change heard before the current build began is in what the build reads.
        if (hash === undefined || generation !== this.#generation) return;
        this.#heard?.push(hash);
        if (this.#bits === null || holds(this.#bits, hash)) return;
        add(this.#bits, hash);
        if (++this.#count * BITS_PER_KEY > this.#bits.length * 32) this.#build();
      },
      () => {
        this.#reading--;
        this.#build();
      },
    );
  }
}

function sizeFor(count: number): number {
  let bits = MIN_BITS;
  while (bits < count * BITS_PER_KEY * 2) bits *= 2;
  return bits;
}

function holds(bits: Uint32Array, hash: string): boolean {
  const mask = bits.length * 32 - 1;
  for (let i = 0; i < PROBES; i++) {
    const bit = Number.parseInt(hash.slice(i * 8, i * 8 + 8), 16) & mask;
    if ((bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
  }
  return true;
}

function add(bits: Uint32Array, hash: string): void {
  const mask = bits.length * 32 - 1;
  for (let i = 0; i < PROBES; i++) {
    const bit = Number.parseInt(hash.slice(i * 8, i * 8 + 8), 16) & mask;
    bits[bit >>> 5]! |= 1 << (bit & 31);
  }
}
