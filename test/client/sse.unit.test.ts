import { describe, expect, it } from 'vitest';
import { follow, type SseMessage, SseParser } from '../../client/sse.js';

/**
 * The Server-Sent Events reader of the client and of `petstore events tail` (client/sse.ts): the WHATWG event stream
 * interpretation, and `follow`'s reconnections, on streams made here.
 */

/** The events `chunks` dispatch, fed one after another. */
function parse(chunks: string[], lastEventId?: string): SseMessage[] {
  const parser = new SseParser(lastEventId);
  return chunks.flatMap((chunk) => parser.push(chunk));
}
const message = (data: string, more: Partial<SseMessage> = {}): SseMessage => ({
  type: 'message',
  data,
  lastEventId: '',
  hasId: false,
  ...more,
});

describe('SseParser', () => {
  it('reads fields, joins data lines with LF, and passes over comments and unknown fields', () => {
    const text = ': hello\nretry: 3000\n\nid: evt_1\nevent: order.placed\ndata: {"a":\ndata:  1}\nfoo: bar\n\n';
    const parser = new SseParser();
    expect(parser.push(text)).toEqual([
      { type: 'order.placed', data: '{"a":\n 1}', lastEventId: 'evt_1', hasId: true },
    ]);
    expect(parser.retryMs).toBe(3000);
    expect(parser.lastEventId).toBe('evt_1');
  });

  it('ends lines at CRLF, CR or LF, also when a CRLF is split between chunks', () => {
    const expected = [message('a'), message('b'), message('c')];
    expect(parse(['data: a\r\n\r\ndata: b\r\rdata: c\n\n'])).toEqual(expected);
    expect(parse(['data: a\r', '\n\r', '\ndata: b\r', '\r', 'data: c\n', '\n'])).toEqual(expected);
    // Fed a character at a time.
    expect(parse([...'data: a\r\n\r\ndata: b\r\rdata: c\n\n'])).toEqual(expected);
  });

  it('follows the spec’s edge cases: no space, no colon, an empty data line, a BOM, `data` alone', () => {
    expect(parse(['\uFEFFdata:x\n\n'])).toEqual([message('x')]);
    expect(parse(['data\n\n'])).toEqual([message('')]);
    expect(parse(['data\ndata\n\n'])).toEqual([message('\n')]);
    expect(parse(['data:  two spaces\n\n'])).toEqual([message(' two spaces')]);
    expect(parse(['event: ping\n\n', 'data: after\n\n'])).toEqual([message('after')]);
  });

  it('keeps the last event id across events, ignores an id with NUL, resets it with an empty id', () => {
    expect(parse(['id: 1\ndata: a\n\ndata: b\n\nid: 2\u0000\ndata: c\n\nid\ndata: d\n\n'], 'evt_0')).toEqual([
      message('a', { lastEventId: '1', hasId: true }),
      message('b', { lastEventId: '1' }),
      message('c', { lastEventId: '1' }),
      message('d', { lastEventId: '', hasId: true }),
    ]);
    // An id with no data still moves the stream's last event id, as EventSource's does.
    const parser = new SseParser('evt_0');
    expect(parser.push('id: evt_9\n\n')).toEqual([]);
    expect(parser.lastEventId).toBe('evt_9');
  });

  it('ignores a retry that is not digits only, and dispatches no unfinished event', () => {
    const parser = new SseParser();
    expect(parser.push('retry: 2s\n\nretry: 1500\n\nid: evt_2\ndata: half')).toEqual([]);
    expect(parser.retryMs).toBe(1500);
    expect(parser.lastEventId).toBe('');
  });
});

/** A body sending `chunks`, then ending (or failing, with `fail`). */
function body(chunks: string[], { fail = false } = {}): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const left = [...chunks];
  // A chunk per read, so that an error comes after every chunk was read (an error drops what is queued).
  return new ReadableStream({
    pull(controller) {
      const chunk = left.shift();
      if (chunk !== undefined) controller.enqueue(encoder.encode(chunk));
      else if (fail) controller.error(new Error('connection reset'));
      else controller.close();
    },
  });
}

describe('follow', () => {
  it('reconnects after each end, waiting the newest retry, with the last id; yields each event once', async () => {
    const bodies = [
      body(['retry: 1000\n\nid: e1\ndata: 1\n\nid: e2\ndata: 2\n\nid: e3\ndata: 3']),
      body(['retry: 2500\n\nid: e2\ndata: 2\n\nid: e3\ndata: 3\n\n'], { fail: true }),
      body(['id: e4\ndata: 4\n\n']),
    ];
    const opened: (string | undefined)[] = [];
    const waits: number[] = [];
    const ends: unknown[] = [];
    const events = follow({
      lastEventId: 'e0',
      open: async (lastEventId) => (opened.push(lastEventId), bodies.shift()!),
      sleep: async (ms) => void waits.push(ms),
      onEnd: (resume) => ends.push(resume),
    });
    const seen: string[] = [];
    for await (const event of events) {
      seen.push(event.data);
      if (seen.length === 4) break;
    }
    // e2 sent again (a replay) is passed over; e3 unfinished at the first end is read from the second stream.
    expect(seen).toEqual(['1', '2', '3', '4']);
    expect(opened).toEqual(['e0', 'e2', 'e3']);
    expect(waits).toEqual([1000, 2500]);
    expect(ends).toEqual([
      { lastEventId: 'e2', retryMs: 1000 },
      { lastEventId: 'e3', retryMs: 2500 },
    ]);
  });

  it('ends with the error of an opening that fails, and quietly once its signal aborts', async () => {
    const refused = follow({ open: () => Promise.reject(new Error('refused')), sleep: async () => {} });
    await expect(refused.next()).rejects.toThrow('refused');

    const stop = new AbortController();
    let cancelled = false;
    const silent = new ReadableStream<Uint8Array>({ cancel: () => void (cancelled = true) });
    const events = follow({ open: async () => silent, sleep: async () => {}, signal: stop.signal });
    const next = events.next();
    await new Promise((resolve) => setTimeout(resolve, 10));
    stop.abort();
    expect(await next).toEqual({ done: true, value: undefined });
    expect(cancelled).toBe(true);
  });
});
