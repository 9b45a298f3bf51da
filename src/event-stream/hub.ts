import { performance } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';
import type { Change } from '../db/change-feed.js';
import type { EventsRepository } from '../events/repository.js';
import type { StoredEvent } from '../events/schemas.js';
import type { StreamSeats } from './seats.js';
import type { EndedBy, EventStream } from './stream.js';

/** How often an instance with open streams looks for their keys' new events: well within 250 ms of a commit. */
export const POLL_MS = 100;
/** The longest a stream stays silent: a comment line then. */
export const HEARTBEAT_MS = 15_000;
/** Events read at once, catching a stream up. */
const BATCH = 200;
/** A stream catching up waits for its client to read below this before writing more. */
const CATCH_UP_BUFFER_BYTES = 64 * 1024;

export interface HubDeps {
  events: Pick<EventsRepository, 'heads' | 'seqsBetween' | 'bySeqs'>;
  seats: StreamSeats;
  /** Told of changed keys (a revocation ends the key's streams), and asked to notice other processes' writes. */
  changes: { subscribe(listener: (change: Change) => void): void; check(): void };
  /** Whether the key was revoked (or no longer exists). */
  revoked(keyId: string): Promise<boolean>;
  /** Called as the service ends a stream, before its end is written: the card hears of it first (test keys). */
  ending(stream: EventStream, by: EndedBy): Promise<void> | void;
  log: { warn(fields: object, message: string): void };
  /** Where the service's metrics are: the streams open on this instance are a gauge of it. */
  registry?: Registry;
  pollMs?: number;
  heartbeatMs?: number;
}

/** A key with open streams on this instance: the newest of its events they were all sent, and their reads in turn. */
interface Owner {
  /** -1 until its first stream's opening read it. */
  head: number;
  /** Streams of the key being opened. */
  opening: number;
  streams: Set<EventStream>;
  /** Its reads, one after another: an opening's catch-up, then each delivery, so that no event falls between. */
  turn: Promise<void>;
}

/**
 * This instance's open event streams (docs/orders-and-events.md#the-event-stream). While any is open, it reads the
 * newest event of each of their keys every `POLL_MS` (one query for all keys), and sends what is new to each stream of
 * the key, in the key's order: on PostgreSQL a key's events commit in that order (its lock), so an event is read only
 * once every earlier one has committed, whichever instance wrote it. A stream that resumes first reads the events it
 * missed. Every stream hears a comment at least every `HEARTBEAT_MS`, and its seat is renewed then.
 */
export class EventStreams {
  readonly #owners = new Map<string, Owner>();
  readonly #deps: HubDeps;
  readonly #pollMs: number;
  readonly #heartbeatMs: number;
  #poller: NodeJS.Timeout | undefined;
  #beats: NodeJS.Timeout | undefined;
  #polling = false;
  #beatsSinceRenewal = 0;
  #closed = false;

  constructor(deps: HubDeps) {
    this.#deps = deps;
    this.#pollMs = deps.pollMs ?? POLL_MS;
    this.#heartbeatMs = deps.heartbeatMs ?? HEARTBEAT_MS;
    deps.changes.subscribe((change) => this.#keyChanged(change));
    if (deps.registry) {
      const open: Gauge = new Gauge({
        name: 'petstore_event_streams_open',
        help: 'Event streams (GET /events/stream) open on this instance.',
        registers: [deps.registry],
        collect: () => open.set(this.size),
      });
    }
  }

  /** Streams open on this instance. */
  get size(): number {
    let size = 0;
    for (const owner of this.#owners.values()) size += owner.streams.size;
    return size;
  }

  /**
   * Where a stream that resumes after no event starts: after the key's newest event, read before its answer is sent,
   * so that an event its client makes once the stream is open comes on it.
   */
  async place(stream: EventStream): Promise<void> {
    if (stream.options.after !== null) return;
    const id = stream.options.owner;
    stream.seq = (await this.#deps.events.heads([id])).get(id) ?? 0;
  }

  /**
   * Starts `stream`: the events it missed (after the one it resumes from), then every new one. Resolves once it is
   * caught up and follows the key live.
   */
  async open(stream: EventStream): Promise<void> {
    const id = stream.options.owner;
    stream.body.once('close', () => this.#left(id, stream));
    let owner = this.#owners.get(id);
    if (!owner) this.#owners.set(id, (owner = { head: -1, streams: new Set(), turn: Promise.resolve(), opening: 0 }));
    const joined = owner;
    joined.opening++;
    this.#start();
    try {
      await this.#inTurn(joined, async () => {
        const head = (await this.#deps.events.heads([id])).get(id) ?? 0;
        if (joined.head < 0) joined.head = head;
        await this.#catchUp(stream, Math.max(head, joined.head));
        if (stream.open) joined.streams.add(stream);
      });
    } finally {
      joined.opening--;
      this.#forgetIfIdle(id, joined);
    }
  }

  /** Ends every stream (a graceful stop): each client sees its stream end and resumes elsewhere. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#poller);
    clearInterval(this.#beats);
    const ending: Promise<void>[] = [];
    for (const owner of this.#owners.values())
      for (const stream of owner.streams) ending.push(this.end(stream, 'stop'));
    await Promise.all(ending);
  }

  /** Ends `stream` for the service: the card hears of it, then the client sees a clean end. */
  async end(stream: EventStream, by: EndedBy): Promise<void> {
    if (!stream.open) return;
    stream.endedBy = by;
    try {
      await this.#deps.ending(stream, by);
    } catch (error) {
      this.#deps.log.warn({ err: error }, 'event stream: its end could not be told to the report card');
    }
    stream.body.end();
  }

  /** A stream closed, however it ended: its seat given back, and its key no longer followed once it has none. */
  #left(id: string, stream: EventStream): void {
    void this.#deps.seats.give(id, stream.id).catch((error: unknown) => {
      this.#deps.log.warn({ err: error }, 'event stream: its seat could not be given back (it lapses)');
    });
    const owner = this.#owners.get(id);
    if (!owner) return;
    owner.streams.delete(stream);
    if (owner.streams.size === 0) void owner.turn.then(() => this.#forgetIfIdle(id, owner));
  }

  #forgetIfIdle(id: string, owner: Owner): void {
    if (owner.streams.size === 0 && owner.opening === 0 && this.#owners.get(id) === owner) this.#owners.delete(id);
    if (this.#owners.size === 0) this.#stop();
  }

  #inTurn(owner: Owner, work: () => Promise<void>): Promise<void> {
    const done = owner.turn.then(work);
    owner.turn = done.catch((error: unknown) => this.#deps.log.warn({ err: error }, 'event stream: a read failed'));
    return done;
  }

  /** The key's events written after `after`, up to `head`, oldest first, read `BATCH` at a time. */
  async *#between(id: string, after: number, head: number): AsyncGenerator<{ seq: number; event: StoredEvent }> {
    const { events } = this.#deps;
    const seqs = await events.seqsBetween(id, after, head);
    for (let i = 0; i < seqs.length; i += BATCH) yield* await events.bySeqs(id, seqs.slice(i, i + BATCH));
  }

  /** Sends `stream` the key's events after its place, up to `head`, oldest first, as fast as its client reads. */
  async #catchUp(stream: EventStream, head: number): Promise<void> {
    for await (const { seq, event } of this.#between(stream.options.owner, stream.seq, head)) {
      if (!this.#sendTo(stream, event, seq)) return;
      if (stream.body.writableLength > CATCH_UP_BUFFER_BYTES)
        await new Promise((resolve) => stream.body.once('drain', resolve).once('close', resolve));
      if (!stream.open) return;
    }
    stream.seq = Math.max(stream.seq, head);
  }

  /** Sends one event; false once the stream is ended (a `drop`, a client too slow). */
  #sendTo(stream: EventStream, event: StoredEvent, seq: number): boolean {
    const sent = stream.send(event, seq, performance.now());
    if (sent === 'drop' || sent === 'slow') {
      void this.end(stream, sent);
      return false;
    }
    return stream.open;
  }

  #start(): void {
    if (this.#poller || this.#closed) return;
    this.#poller = setInterval(() => void this.#poll(), this.#pollMs).unref();
    this.#beats = setInterval(() => void this.#beat(), this.#heartbeatMs / 3).unref();
  }

  #stop(): void {
    clearInterval(this.#poller);
    clearInterval(this.#beats);
    this.#poller = this.#beats = undefined;
  }

  /** One look at every followed key's newest event; what is new goes to its streams. */
  async #poll(): Promise<void> {
    if (this.#polling || this.#owners.size === 0) return;
    this.#polling = true;
    try {
      // Another process's writes to the embedded store (the CLI revoking a key) are noticed here.
      this.#deps.changes.check();
      const heads = await this.#deps.events.heads([...this.#owners.keys()]);
      for (const [id, head] of heads) {
        const owner = this.#owners.get(id);
        if (owner && owner.head >= 0 && head > owner.head)
          void this.#inTurn(owner, () => this.#deliver(id, owner, head));
      }
    } catch (error) {
      this.#deps.log.warn({ err: error }, 'event stream: the newest events could not be read');
    } finally {
      this.#polling = false;
    }
  }

  async #deliver(id: string, owner: Owner, head: number): Promise<void> {
    if (head <= owner.head) return;
    for await (const { seq, event } of this.#between(id, owner.head, head))
      for (const stream of owner.streams) this.#sendTo(stream, event, seq);
    owner.head = head;
  }

  /** A comment on every stream silent for two thirds of `HEARTBEAT_MS`; the seats renewed once per `HEARTBEAT_MS`. */
  async #beat(): Promise<void> {
    const now = performance.now();
    const seats: { keyId: string; stream: string }[] = [];
    for (const [keyId, owner] of this.#owners)
      for (const stream of owner.streams) {
        if (now - stream.wroteAt >= (this.#heartbeatMs * 2) / 3) stream.heartbeat(now);
        seats.push({ keyId, stream: stream.id });
      }
    if (++this.#beatsSinceRenewal < 3) return;
    this.#beatsSinceRenewal = 0;
    await this.#deps.seats.renew(seats).catch((error: unknown) => {
      this.#deps.log.warn({ err: error }, 'event stream: seats could not be renewed');
    });
  }

  /** A key changed (on any instance): if it was revoked, its streams end. */
  #keyChanged(change: Change): void {
    const ids = change.table === null ? [...this.#owners.keys()] : change.table === 'api_keys' ? [change.id] : [];
    for (const id of ids) {
      const owner = this.#owners.get(id);
      if (!owner) continue;
      void this.#deps.revoked(id).then(
        (revoked) => {
          if (revoked) for (const stream of owner.streams) void this.end(stream, 'revoked');
        },
        (error: unknown) => this.#deps.log.warn({ err: error }, 'event stream: a changed key could not be read'),
      );
    }
  }
}
