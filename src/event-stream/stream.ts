import { PassThrough } from 'node:stream';
import { eventJson } from '../events/payload.js';
import type { EventType, StoredEvent } from '../events/schemas.js';

/** What a client waits before reconnecting (the stream's first field, `retry`), in ms. */
export const RETRY_MS = 3_000;
/**
 * Why the service ended a stream: a `drop` asked for, a graceful stop, the key revoked, a client that reads too
 * slowly.
 */
export type EndedBy = 'drop' | 'stop' | 'revoked' | 'slow';
/** A stream's answer as the request log keeps it: at most this many characters of what was sent. */
const TRANSCRIPT_CHARACTERS = 16 * 1024;
/** Written but unread by the client beyond this, the stream is ended: the service holds no reader's backlog. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

export interface StreamOptions {
  /** Its seat's (./seats.ts). */
  id: string;
  owner: string;
  /** The version its events are shaped in: the opening request's. */
  version: string;
  /** Only these types; null: every type. */
  types: ReadonlySet<EventType> | null;
  /** The event it resumes after (`Last-Event-ID`, `after`): its place and id; null, from now on. */
  after: { seq: number; id: string } | null;
  /** `drop` (a test key's fault or step): the stream ends after this many more events; null, never. */
  dropAfter: number | null;
  /** Whether to keep what it sends, for the request log (test keys'). */
  transcript: boolean;
  /** A test key's: the request that opened it and its card's start, for the card to hear of its end. */
  graded: { requestId: string; since: number } | null;
}

/**
 * One open stream of a key's events (text/event-stream, as WHATWG HTML defines server-sent events): `body` is the
 * answer Fastify sends. It writes each event once, in the key's order (an event at or before the last it wrote is
 * passed over), and knows the id of the last one sent, which is what a client resumes from.
 */
export class EventStream {
  readonly id: string;
  readonly body = new PassThrough();
  /** The `seq` of the last event written or passed over: the stream's place in the key's events. */
  seq: number;
  /** The id a client resuming this stream must send: its last event's, or the one it resumed after. */
  lastId: string | null;
  /** Real time of its last write, for the heartbeats. */
  wroteAt = 0;
  /** How the service ended it; undefined while open, or when the client closed it. */
  endedBy: EndedBy | undefined;
  #transcript = '';
  #dropAfter: number | null;

  constructor(
    readonly options: StreamOptions,
    now: number,
  ) {
    this.id = options.id;
    this.seq = options.after?.seq ?? 0;
    this.lastId = options.after?.id ?? null;
    this.#dropAfter = options.dropAfter;
    this.#write(`retry: ${RETRY_MS}\n\n`, now);
  }

  get open(): boolean {
    return this.endedBy === undefined && !this.body.destroyed && !this.body.writableEnded;
  }

  /** What was sent, as the request log keeps it. */
  get transcript(): string {
    return this.#transcript;
  }

  /** Sends `event` unless it was sent or filtered out; answers whether the stream now asks to be ended, and why. */
  send(event: StoredEvent, seq: number, now: number): 'sent' | 'skipped' | 'drop' | 'slow' {
    if (seq <= this.seq || !this.open) return 'skipped';
    this.seq = seq;
    if (this.options.types && !this.options.types.has(event.type)) return 'skipped';
    this.#write(`id: ${event.id}\nevent: ${event.type}\ndata: ${eventJson(event, this.options.version)}\n\n`, now);
    this.lastId = event.id;
    if (this.#dropAfter !== null && --this.#dropAfter === 0) return 'drop';
    return this.body.writableLength > MAX_BUFFERED_BYTES ? 'slow' : 'sent';
  }

  /** A comment line, so that proxies and clients see the stream alive while nothing happens. */
  heartbeat(now: number): void {
    if (this.open) this.#write(': keep-alive\n\n', now);
  }

  #write(text: string, now: number): void {
    this.wroteAt = now;
    if (this.options.transcript && this.#transcript.length < TRANSCRIPT_CHARACTERS)
      this.#transcript += text.slice(0, TRANSCRIPT_CHARACTERS - this.#transcript.length);
    this.body.write(text);
  }
}
