import { BannedError, RateLimitedError } from './errors.js';
import { type RateLimitState, remainingOf, roomAt } from './rate-limit.js';

export interface GateOptions {
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Wait for room before sending instead of letting the server refuse. Once refused, the key is paced anyway. */
  pace: boolean;
  /**
   * Asks the service where the key's windows stand without counting a request (`GET /usage`'s
   * headers); undefined when it cannot tell.
   */
  look?: () => Promise<RateLimitState | undefined>;
}

/**
 * When the next request of a client (one key) may go, from what the server last said about the key.
 *
 * - Never more requests in flight than the newest response said were left (one while nothing is known):
 *   a burst cannot overrun the limit by the requests already on their way.
 * - After a 429 nobody sends before its `Retry-After`; waits are the key's, not the request's.
 * - With pacing (or once refused), a request waits until the `RateLimit` header's `t` when no room is left.
 * - A request whose answer was lost (a reset connection) is taken to have counted, as the service may
 *   have: once that spends what was known to be left, the next waits for the slot the window frees
 *   next (the `t` of the newest answer), as the lost answer would have said. Sent blind (after a
 *   wait, when nothing was known), the next first asks the service where the windows stand (`look`).
 *
 * Requests are admitted one at a time, in call order, so only the first in line ever sleeps; with a
 * test clock whose `sleep` moves time, parallel sleeps would add up.
 */
export class Gate {
  #turns: Promise<unknown> = Promise.resolve();
  #inFlight = 0;
  /** Left after the newest response; undefined before any, and after a wait: send one and see. */
  #remaining: number | undefined;
  #roomAt = 0;
  /** The newest state reported, and the requests counted since whose answers were lost. */
  #newest: RateLimitState | undefined;
  #lostSince = 0;
  /** An answer was lost when nothing was known of what was left: look before sending more. */
  #unsure = false;
  /** No answer yet from the requests in flight together: the next one replaces what is known. */
  #fresh = true;
  #blockedUntil = 0;
  #banned = false;
  #refused = false;
  #settled: (() => void)[] = [];

  constructor(private readonly options: GateOptions) {}

  /** Resolves when one more request may be sent; each admission must be ended by `settle`. */
  admit(maxWaitMs: number): Promise<void> {
    const turn = this.#turns.then(() => this.#room(maxWaitMs));
    this.#turns = turn.catch(() => undefined);
    return turn;
  }

  /** An admitted request ended, with the state its response reported (none after a network error). */
  settle(state: RateLimitState | undefined): void {
    this.#inFlight--;
    if (state) this.#learn(state);
    else this.#lost();
    for (const wake of this.#settled.splice(0)) wake();
  }

  /** What an answer said of the windows. */
  #learn(state: RateLimitState): void {
    const remaining = remainingOf(state);
    if (remaining === undefined) return;
    // Answers to requests in flight together may arrive in any order: the least left is the newest.
    this.#remaining = this.#fresh ? remaining : Math.min(this.#remaining ?? remaining, remaining);
    this.#roomAt = this.#fresh ? roomAt(state) : Math.max(this.#roomAt, roomAt(state));
    this.#fresh = false;
    this.#unsure = false;
    if (!this.#newest || state.at >= this.#newest.at) [this.#newest, this.#lostSince] = [state, 0];
  }

  /** No answer: the request may have counted (a reset after the service answered), and is taken to have. */
  #lost(): void {
    // A service that never spoke of limits has none to keep.
    if (!this.#newest) return;
    this.#lostSince++;
    if (this.#remaining === undefined) {
      this.#unsure = true;
      return;
    }
    this.#remaining = Math.max(0, this.#remaining - 1);
    this.#roomAt = Math.max(this.#roomAt, roomAt(this.#newest, this.#lostSince));
  }

  /**
   * Where the windows stand, asked of the service. When it cannot tell (nothing answers), one request
   * goes to see, as before any answer: a service that does not answer counts nothing.
   */
  async #look(): Promise<void> {
    this.#unsure = false;
    const state = await this.options.look?.().catch(() => undefined);
    if (!state || remainingOf(state) === undefined) return;
    this.#fresh = true;
    this.#learn(state);
  }

  /** The server refused (429): nothing is sent before `until`, and the key is paced from now on. */
  refuse(until: number, banned: boolean): void {
    this.#refused = true;
    if (until <= this.#blockedUntil) return;
    this.#blockedUntil = until;
    this.#banned = banned;
  }

  async #room(maxWaitMs: number): Promise<void> {
    for (;;) {
      const now = this.options.now();
      if (this.#blockedUntil > now) {
        await this.#wait(this.#blockedUntil - now, maxWaitMs, this.#banned);
        continue;
      }
      if (this.#unsure && this.#inFlight === 0) {
        await this.#look();
        continue;
      }
      if ((this.#remaining ?? 1) > this.#inFlight) {
        if (this.#inFlight === 0) this.#fresh = true;
        this.#inFlight++;
        return;
      }
      if (this.#inFlight > 0) {
        // Their answers tell more than the newest one did.
        await new Promise<void>((wake) => this.#settled.push(wake));
        continue;
      }
      const wait = this.#roomAt - now;
      if (wait > 0 && (this.options.pace || this.#refused)) await this.#wait(wait, maxWaitMs, false);
      this.#remaining = undefined;
    }
  }

  async #wait(ms: number, maxWaitMs: number, banned: boolean): Promise<void> {
    if (ms > maxWaitMs) {
      const retryAfter = Math.ceil(ms / 1000);
      const message =
        `Not sent: the key ${banned ? 'is banned' : 'has no request left'} for ${retryAfter} s, longer than ` +
        `maxWaitMs`;
      throw new (banned ? BannedError : RateLimitedError)(message, { status: 429, retryAfter });
    }
    await this.options.sleep(ms);
  }
}
