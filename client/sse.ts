/**
 * Server-Sent Events read as a WHATWG `EventSource` reads them (HTML, "Server-sent events"): the parser, and `follow`,
 * which keeps a stream going across its ends, waiting the stream's `retry` and resuming after the last event id it
 * received. It imports nothing: the typed client stands alone. (`petstore events tail` reads the stream with the
 * `eventsource` package.)
 */

/** One event of a stream, as `EventSource` dispatches it. */
export interface SseMessage {
  /** The `event` field; `message` when none was sent. */
  type: string;
  /** The `data` lines, joined with `\n`. */
  data: string;
  /** The stream's last event id as it dispatched this event: this event's `id`, or an earlier one's (`''`: none). */
  lastEventId: string;
  /** Whether this event carried an `id` field of its own. */
  hasId: boolean;
}

/** The wait before reconnecting until a stream says otherwise (`retry`): the service's, 3 s. */
export const DEFAULT_RETRY_MS = 3_000;

/**
 * The event stream's interpretation, fed text as it arrives: a line ends in CRLF, LF or CR (a CRLF may be split
 * between two chunks); a line starting with `:` is a comment; `data` lines add up; `id` (without NUL) sets the last
 * event id; `retry` (digits only) the reconnection time; other fields are ignored; a blank line dispatches the event,
 * unless it has no data. An event not ended by a blank line when the stream ends is never dispatched.
 */
export class SseParser {
  /** The reconnection time the stream asked for (`retry`), in ms; undefined until it does. */
  retryMs: number | undefined;
  /** The id of the last event dispatched (or the one the stream resumed after): what a reconnection sends. */
  lastEventId: string;
  #idBuffer: string;
  #idInEvent = false;
  #data = '';
  #type = '';
  /** An unfinished line. */
  #rest = '';
  /** The text so far ended in CR: an LF opening the next chunk ends nothing more. */
  #afterCr = false;
  #started = false;

  /** @param lastEventId the id the stream resumes after, which it keeps until it sends another. */
  constructor(lastEventId = '') {
    this.lastEventId = lastEventId;
    this.#idBuffer = lastEventId;
  }

  /** The events that `text` completes, in order. */
  push(text: string): SseMessage[] {
    if (text === '') return [];
    if (!this.#started) {
      this.#started = true;
      if (text.startsWith('\uFEFF')) text = text.slice(1);
    }
    if (this.#afterCr && text.startsWith('\n')) text = text.slice(1);
    this.#afterCr = false;
    const pending = this.#rest + text;
    const messages: SseMessage[] = [];
    const endOfLine = /\r\n|\r|\n/g;
    let start = 0;
    for (let found = endOfLine.exec(pending); found; found = endOfLine.exec(pending)) {
      this.#line(pending.slice(start, found.index), messages);
      start = found.index + found[0].length;
      this.#afterCr = found[0] === '\r' && start === pending.length;
    }
    this.#rest = pending.slice(start);
    return messages;
  }

  #line(line: string, messages: SseMessage[]): void {
    if (line === '') return this.#dispatch(messages);
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'event') this.#type = value;
    else if (field === 'data') this.#data += `${value}\n`;
    else if (field === 'id' && !value.includes('\u0000')) {
      this.#idBuffer = value;
      this.#idInEvent = true;
    } else if (field === 'retry' && /^[0-9]+$/.test(value)) this.retryMs = Number(value);
  }

  #dispatch(messages: SseMessage[]): void {
    this.lastEventId = this.#idBuffer;
    const [data, type, hasId] = [this.#data, this.#type, this.#idInEvent];
    this.#data = this.#type = '';
    this.#idInEvent = false;
    if (data === '') return;
    messages.push({ type: type || 'message', data: data.slice(0, -1), lastEventId: this.lastEventId, hasId });
  }
}

export interface FollowOptions {
  /**
   * Opens one connection of the stream, resuming after `lastEventId` when there is one (`Last-Event-ID`): its body.
   * A rejection ends the iteration with its error (a refusal, or failures the opener gave up on); `signal` aborts the
   * request when the iteration stops.
   */
  open(lastEventId: string | undefined, signal: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  /** Waits `ms`: a reconnection's wait. */
  sleep(ms: number): Promise<void>;
  /** Resume after this event from the first connection on. */
  lastEventId?: string;
  /** Stops the iteration, and closes the connection: the iteration ends (without an error). */
  signal?: AbortSignal;
  /** Told when a connection ended (the service ended it, or it was lost) and the next opens after `retryMs`. */
  onEnd?: (resume: { lastEventId: string | undefined; retryMs: number }) => void;
}

/** Ids of events dispatched lately, by which one sent twice (a proxy replaying, say) is passed over. */
const RECENT_IDS = 1_000;

/**
 * A stream's events, followed across its ends for as long as the caller iterates: when a connection ends, cleanly or
 * not, the next opens after the stream's `retry` (`DEFAULT_RETRY_MS` until it sent one), resuming after the last event
 * id received, as `EventSource` reconnects. Each event is yielded once. `break` or `signal` closes the connection.
 */
export async function* follow(options: FollowOptions): AsyncGenerator<SseMessage, void, undefined> {
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let lastEventId = options.lastEventId || undefined;
  let retryMs = DEFAULT_RETRY_MS;
  const recent = new Set<string>();
  try {
    for (let connection = 0; !signal.aborted; connection++) {
      if (connection > 0) {
        options.onEnd?.({ lastEventId, retryMs });
        if (!(await unlessAborted(options.sleep(retryMs), signal))) return;
      }
      const opened = await unlessAborted(options.open(lastEventId, signal), signal);
      if (!opened) return;
      const parser = new SseParser(lastEventId);
      const reader = opened.value.getReader();
      const decoder = new TextDecoder();
      // A read under way ends (done) when the iteration stops, whether or not the opener's request saw the signal.
      const cancel = () => void reader.cancel().catch(() => undefined);
      signal.addEventListener('abort', cancel, { once: true });
      try {
        for (;;) {
          const chunk = await reader.read().catch(() => undefined);
          // The end of the stream, or of the connection: the next one resumes (unless the iteration stopped).
          if (!chunk || chunk.done) break;
          for (const message of parser.push(decoder.decode(chunk.value, { stream: true }))) {
            retryMs = parser.retryMs ?? retryMs;
            lastEventId = message.lastEventId || undefined;
            if (message.hasId && recent.has(message.lastEventId)) continue;
            if (message.hasId) remember(recent, message.lastEventId);
            yield message;
          }
        }
      } finally {
        signal.removeEventListener('abort', cancel);
        await reader.cancel().catch(() => undefined);
      }
      retryMs = parser.retryMs ?? retryMs;
      lastEventId = parser.lastEventId || undefined;
    }
  } finally {
    stop.abort();
  }
}

/** What `promise` resolves with, unless `signal` aborts first (undefined then). */
async function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<{ value: T } | undefined> {
  if (signal.aborted) {
    void promise.then(cancelBody, () => undefined);
    return undefined;
  }
  let quit: () => void = () => {};
  const aborted = new Promise<undefined>((resolve) => {
    quit = () => resolve(undefined);
    signal.addEventListener('abort', quit, { once: true });
  });
  try {
    return await Promise.race([promise.then((value) => ({ value })), aborted]);
  } catch (error) {
    if (signal.aborted) return undefined;
    throw error;
  } finally {
    signal.removeEventListener('abort', quit);
    if (signal.aborted) void promise.then(cancelBody, () => undefined);
  }
}

/** A body opened after the iteration stopped: nobody reads it. */
function cancelBody(value: unknown): void {
  if (value instanceof ReadableStream) void value.cancel().catch(() => undefined);
}

function remember(recent: Set<string>, id: string): void {
  recent.add(id);
  if (recent.size > RECENT_IDS) recent.delete(recent.values().next().value!);
}
