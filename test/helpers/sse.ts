/** A stream read as a client reads it: raw frames (WHATWG server-sent events), one at a time. */
export interface Frame {
  /** The frame's fields as sent (`id`, `event`, `data`, `retry`); a comment's text under `comment`. */
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

export interface OpenedStream {
  status: number;
  headers: Headers;
  /** The body of an answer that is no stream (a problem). */
  body?: unknown;
  /** The next frame; undefined once the service ended the stream. Rejects after `ms` without one. */
  next(ms?: number): Promise<Frame | undefined>;
  /** The next frames that are events (comments and `retry` passed over), `count` of them. */
  events(count: number, ms?: number): Promise<Frame[]>;
  /** Everything sent so far, as text. */
  readonly text: string;
  /** Closes it from the client's side. */
  close(): void;
}

/** Opens `GET {url}` as a stream client would, with `headers`; the answer's frames read as they come. */
export async function openStream(url: string, headers: Record<string, string> = {}): Promise<OpenedStream> {
  const aborter = new AbortController();
  const answer = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: aborter.signal });
  if (!answer.headers.get('content-type')?.startsWith('text/event-stream')) {
    const body = await answer.json().catch(() => undefined);
    return {
      status: answer.status,
      headers: answer.headers,
      body,
      next: async () => undefined,
      events: async () => [],
      text: '',
      close: () => {},
    };
  }
  const reader = answer.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  let text = '';
  let ended = false;
  const frames: Frame[] = [];
  async function next(ms = 5_000): Promise<Frame | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const frame = frames.shift();
      if (frame) return frame;
      if (ended) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no frame within ${ms} ms; received so far:\n${text}`);
      let timer: NodeJS.Timeout | undefined;
      const read = await Promise.race([
        reader.read().catch(() => ({ done: true, value: undefined })),
        new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), left))),
      ]);
      clearTimeout(timer);
      if (read === 'late') continue;
      if (read.done) {
        ended = true;
        continue;
      }
      text += read.value;
      buffered += read.value;
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        frames.push(parseFrame(buffered.slice(0, end)));
        buffered = buffered.slice(end + 2);
      }
    }
  }
  return {
    status: answer.status,
    headers: answer.headers,
    next,
    async events(count, ms = 5_000) {
      const found: Frame[] = [];
      while (found.length < count) {
        const frame = await next(ms);
        if (!frame) throw new Error(`the stream ended after ${found.length} of ${count} events`);
        if (frame.event) found.push(frame);
      }
      return found;
    },
    get text() {
      return text;
    },
    close: () => aborter.abort(),
  };
}

/** One frame's lines (without the blank line that ends it) as its fields. */
export function parseFrame(raw: string): Frame {
  const frame: Frame = {};
  for (const line of raw.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon) as 'id' | 'event' | 'data' | 'retry';
      frame[name] = line.slice(colon + 1).replace(/^ /, '');
    }
  }
  return frame;
}
