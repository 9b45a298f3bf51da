import { executionAsyncResource } from 'node:async_hooks';

/**
 * Keeps one of Node's `process.nextTick` records alive for the life of the process, so that V8 keeps
 * compiling the record's object literal inline. Imported first by the entry point (../main.ts).
 *
 * The record is `{ [async_id_symbol], [trigger_async_id_symbol], callback, args }`. At each of those
 * properties V8 remembers the hidden class (map) the object had, but only weakly, and a record lives
 * for one tick. A full garbage collection while no record is alive frees those maps and the next tick
 * makes new ones. After two or three such collections (the service's start-up has them) V8 gives up:
 * three of the four properties turn megamorphic for good, and from then on every `nextTick` (Node's
 * streams make dozens per request) defines them through the V8 runtime instead of inline code
 * (measured: docs/performance.md). One record held keeps its maps alive, and the literal stays
 * monomorphic.
 *
 * A bare `node:http` server never collects fully under load, so it never shows this.
 * test/ops/tick-maps.test.ts checks the effect on this Node, through V8's own feedback.
 */
const kept: object[] = [];

// Inside a `nextTick` callback, the current async resource is the tick's own record.
process.nextTick(() => kept.push(executionAsyncResource()));
