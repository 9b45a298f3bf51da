import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULTS } from '../../src/config.js';
import { boundPipelining, readSlowly } from '../../src/http/pipelining.js';
import { type TestApp, testApp } from '../helpers/app.js';

const BANNED_READ_PAUSE_MS = DEFAULTS.bannedReadPauseMs;

/**
 * A caller that keeps sending while banned is answered at most once every `BANNED_READ_PAUSE_MS` on each
 * connection: once its refusal is written, the connection is not read for that long (src/http/pipelining.ts),
 * so that its refusals do not take the turns of everyone else. Not behind a trusted proxy, whose
 * connections carry many clients.
 */

/** A connection as the pipelining bound sees one, with its pauses and resumes counted. */
function connection() {
  const socket = Object.assign(new EventEmitter(), {
    destroyed: false,
    pause: vi.fn(),
    resume: vi.fn(),
    destroy: vi.fn(),
  });
  /** One request on it, answered (its response closed), as a banned caller's or not. */
  const answer = (bound: ReturnType<typeof boundPipelining>, banned: boolean) => {
    const req = { socket } as unknown as IncomingMessage;
    const res = Object.assign(new EventEmitter(), { req }) as unknown as ServerResponse;
    expect(bound.admit(req, res)).toBe(true);
    if (banned) readSlowly(req);
    res.emit('close');
  };
  return { socket, answer };
}

describe('a banned caller’s connection, read slowly', () => {
  afterEach(() => vi.useRealTimers());

  it('is not read for BANNED_READ_PAUSE_MS after each refusal of a ban, counted from the last', () => {
    vi.useFakeTimers();
    const bound = boundPipelining(() => {}, { bannedReadPauseMs: BANNED_READ_PAUSE_MS });
    const { socket, answer } = connection();
    answer(bound, true);
    expect(socket.pause).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(BANNED_READ_PAUSE_MS - 10);
    answer(bound, true);
    vi.advanceTimersByTime(BANNED_READ_PAUSE_MS - 1);
    expect(socket.resume).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(socket.resume).toHaveBeenCalledTimes(1);
  });

  it('leaves every other answer’s connection as it was, and every connection when the pause is 0 (BANNED_READ_PAUSE_MS=0, or behind a trusted proxy)', () => {
    vi.useFakeTimers();
    const direct = connection();
    direct.answer(
      boundPipelining(() => {}, { bannedReadPauseMs: BANNED_READ_PAUSE_MS }),
      false,
    );
    const proxied = connection();
    proxied.answer(
      boundPipelining(() => {}, { bannedReadPauseMs: 0 }),
      true,
    );
    vi.advanceTimersByTime(BANNED_READ_PAUSE_MS);
    for (const { socket } of [direct, proxied]) expect(socket.pause).not.toHaveBeenCalled();
  });

  describe('over a real socket', () => {
    let t: TestApp | undefined;
    afterEach(async () => t?.close());

    it('answers a banned caller’s next request on the same connection only after the pause', async () => {
      // One refusal that counts starts a ban (the second: the first follows no other); the address has no key,
      // so it counts under the anonymous policy (60 a minute).
      t = await testApp({ env: { BAN_AFTER_REJECTIONS: '1' } });
      const port = Number(new URL(await t.app.listen({ host: '127.0.0.1', port: 0 })).port);
      const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.4' });
      let text = '';
      const answered: number[] = [];
      socket.on('data', (chunk) => {
        text += chunk.toString();
        while (answered.length < (text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0)) answered.push(performance.now());
      });
      const send = async () => {
        const before = answered.length;
        socket.write('GET /pets/1 HTTP/1.1\r\nHost: x\r\n\r\n');
        while (answered.length === before) await new Promise((resolve) => setTimeout(resolve, 1));
      };
      for (let i = 0; i < 63; i++) await send();
      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
      expect(statuses.slice(0, 60).every((status) => status === 401)).toBe(true);
      expect(statuses.slice(60)).toEqual([429, 429, 429]);
      expect(text).toContain('/problems/key-banned');
      await send();
      // The fourth refusal was read no sooner than the pause after
      // the third, the ban's first, was written (it reached the client after that).
      expect(answered[63]! - answered[62]!).toBeGreaterThanOrEqual(BANNED_READ_PAUSE_MS - 5);
      socket.destroy();
    });
  });
});
