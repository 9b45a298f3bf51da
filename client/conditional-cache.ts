/**
 * The bodies of reads the service answered with an `ETag`, by URL: the next read of the URL sends the
 * tag in `If-None-Match`, and a `304 Not Modified` (which counts nothing toward the key's limits)
 * stands for the body kept here. Bounded: the least recently used URL leaves first.
 */
export class ConditionalCache {
  readonly #entries = new Map<string, { etag: string; body: string }>();
  #saved = 0;

  constructor(private readonly max: number) {}

  /** The tag to send for `url`, if a body is kept for it. */
  etagOf(url: string): string | undefined {
    return this.#entries.get(url)?.etag;
  }

  /** A `200` with an `ETag`: its body is kept for the next read. */
  remember(url: string, etag: string, body: string): void {
    this.#entries.delete(url);
    if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(url, { etag, body });
  }

  /**
   * A `304`: the body kept, counted as a request saved; undefined if none is kept (then the 304 is not ours to answer).
   */
  recall(url: string): string | undefined {
    const entry = this.#entries.get(url);
    if (!entry) return undefined;
    this.#entries.delete(url);
    this.#entries.set(url, entry);
    this.#saved++;
    return entry.body;
  }

  /** Reads answered `304` from here: requests that cost the key nothing. */
  get saved(): number {
    return this.#saved;
  }
}
