import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Unanswered requests at which a connection is no longer read: further ones wait in the client's socket. */
export const PAUSE_AT = 8;
/**
 * Unanswered requests beyond which a connection is closed. Node parses everything one read brings
 * (up to 64 KB: hundreds of small requests) before a pause takes effect, and holds each request it
 * parsed until it is answered and the answer written; a client that sends more than this in one go is
 * not waiting for answers, and what it sent is dropped rather than held.
 */
export const CLOSE_ABOVE = 64;
/**
 * How long an address whose connection was closed above `CLOSE_ABOVE` has its connections refused
 * (./connections.ts), unless the service sits behind a trusted proxy.
 */
export const FLOOD_REFUSAL_MS = 10_000;
/**
 * Marks a request answered as a banned caller's (`readSlowly`): once the answer is written, its connection
 * is not read for a while (`BANNED_READ_PAUSE_MS`, 100 ms by default; not behind a trusted proxy, whose
 * connections carry many clients). A caller that keeps sending while banned is then answered at most
 * that often on each connection, so that its refusals, cheap as they are, do not take the turns of
 * everyone else. A property of the request itself, not an entry of a WeakSet: adding to a WeakSet was as large
 * an item of a banned caller's refusal as any of the service's own (docs/performance.md#every-request-through-fastify).
 */
const ANSWERED_BANNED = Symbol('answeredBanned');

type Marked = IncomingMessage & { [ANSWERED_BANNED]?: true };

/** Marks `req` as a banned caller's: once its answer is written, its connection is read again only after the pause. */
export function readSlowly(req: IncomingMessage): void {
  (req as Marked)[ANSWERED_BANNED] = true;
}

export interface PipeliningBound {
  /**
   * Counts a request in, before either entrance sees it; false
   * when its connection was closed (nothing more is done with it).
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean;
}

/**
 * Bounds what one connection can make the service hold: memory and work grow with the requests read
 * and not yet answered, so a connection with `PAUSE_AT` of them is not read until one is answered and
 * its answer written (`close` of the response: after its last byte reached the kernel, or the
 * connection ended), and one with more than `CLOSE_ABOVE` is closed. Everything goes through the
 * socket's public `pause()`/`resume()`; Node may resume a socket itself (reading a body), so a
 * connection held back is paused again whenever it resumes.
 */
export function boundPipelining(
  closed: (socket: Socket) => void,
  { bannedReadPauseMs }: { bannedReadPauseMs: number },
): PipeliningBound {
  const unanswered = new WeakMap<Socket, Held>();

  function onResponseClose(this: ServerResponse): void {
    const held = unanswered.get(this.req.socket);
    if (held === undefined) return;
    held.count--;
    if (bannedReadPauseMs > 0 && (this.req as Marked)[ANSWERED_BANNED]) held.slow(bannedReadPauseMs);
    else held.release();
  }

  return {
    admit(req, res) {
      const socket = req.socket;
      if (socket.destroyed) return false;
      let held = unanswered.get(socket);
      if (held === undefined) unanswered.set(socket, (held = new Held(socket)));
      res.on('close', onResponseClose);
      if (++held.count > CLOSE_ABOVE) {
        socket.destroy();
        closed(socket);
        return false;
      }
      if (held.count >= PAUSE_AT) held.hold();
      return true;
    },
  };
}

/** A connection's count of requests read and not yet answered, and whether it is read slowly now. */
class Held {
  count = 0;
  paused = false;
  #slowed: NodeJS.Timeout | undefined = undefined;
  #watching = false;
  constructor(readonly socket: Socket) {}

  hold(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
    if (this.#watching) return;
    this.#watching = true;
    this.socket.on('resume', () => {
      if (this.paused) this.socket.pause();
    });
  }

  /** Read again, unless it holds `PAUSE_AT` unanswered or is read slowly. */
  release(): void {
    if (!this.paused || this.count >= PAUSE_AT || this.#slowed) return;
    this.paused = false;
    this.socket.resume();
  }

  /** Not read for `ms` from now. */
  slow(ms: number): void {
    clearTimeout(this.#slowed);
    this.hold();
    this.#slowed = setTimeout(() => {
      this.#slowed = undefined;
      this.release();
    }, ms).unref();
  }
}
