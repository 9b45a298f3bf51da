import { randomInt } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Clock } from '../clock.js';

/**
 * The in-flight allowance (docs/testing-clients.md#is-my-client-a-good-api-citizen): a request that
 * arrives within `IN_FLIGHT_MS` after an answer, on another connection that was already open when the
 * answer was written, may have been sent before the client could read that answer. The report card
 * holds no check against it, and its `429` counts toward no ban (docs/rate-limits.md#bans).
 * A request on the same connection, or on one opened after the answer, gets no allowance: a client
 * with one request at a time gets none, and a burst written before any answer fails nothing.
 */
export const IN_FLIGHT_MS = 50;

/**
 * Connections are told apart by an id that is this instance's (its high part, random) and counts up
 * (its low part): on one instance, a connection whose id is at most an answer's `mark` (the newest id
 * when the answer was written) was open then. Ids stay below 2^53, so they travel as plain numbers.
 */
const INSTANCE_SPAN = 2 ** 32;

/** A request, as the allowance sees it: when it came (real time), and on which connection, opened when. */
export interface Arrival {
  readonly real: number;
  /** Its connection's id; 0 where none is known (it is then like no other, and gets no allowance). */
  readonly conn: number;
  readonly openedAt: number;
}

/** An answer, as the allowance sees it: when it was written, on which connection, and the newest connection then. */
export interface Written {
  readonly real: number;
  readonly conn: number;
  readonly mark: number;
}

/** Whether `request` may have been sent before the client could read `answer` (it came after it). */
export function inFlight(request: Arrival, answer: Written): boolean {
  if (request.conn === 0 || answer.conn === 0 || request.conn === answer.conn) return false;
  if (request.real - answer.real > IN_FLIGHT_MS) return false;
  // On the answer's instance, ids say which came first; through another, their instants do, to the millisecond:
  // a connection opened in the answer's very millisecond may have been opened after reading it (a client
  // answered and connecting again within one millisecond, over loopback), and is not taken as open before.
  const sameInstance = Math.floor(request.conn / INSTANCE_SPAN) === Math.floor(answer.mark / INSTANCE_SPAN);
  return sameInstance ? request.conn <= answer.mark : request.openedAt < answer.real;
}

/** A connection's id and when it opened. */
export interface Connection {
  readonly conn: number;
  readonly openedAt: number;
}

/** The ids of this instance's connections, given as each opens (the server's `connection` event). */
export class Connections {
  readonly #instance = randomInt(1, 2 ** 20) * INSTANCE_SPAN;
  #count = 0;
  readonly #known = new WeakMap<object, Connection>();

  constructor(private readonly clock: Clock) {}

  /** A connection opened now. */
  opened(socket: Socket): void {
    this.#known.set(socket, { conn: this.#instance + ++this.#count, openedAt: this.clock() });
  }

  /** A request's connection; one never seen open (an injected request's) is taken as opened now. */
  of(socket: object | null | undefined): Connection {
    if (!socket) return { conn: 0, openedAt: this.clock() };
    let known = this.#known.get(socket);
    if (known === undefined) {
      known = { conn: this.#instance + ++this.#count, openedAt: this.clock() };
      this.#known.set(socket, known);
    }
    return known;
  }

  /** The newest id given: every connection open now has an id no greater. */
  mark(): number {
    return this.#instance + this.#count;
  }
}
