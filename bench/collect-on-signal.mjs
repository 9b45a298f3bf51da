/* global process */
// Preloaded into the service by a bench that reads its memory (bench/event-streams.ts), with `--expose-gc`, through
// NODE_OPTIONS: the service exposes no collection of its own, and a heap read between two collections holds whatever
// garbage the young generation has gathered (tens of MB, against a few KB a stream). SIGUSR2 collects it all, twice
// (what the first leaves to finalise), before the bench's next /metrics reading. Nothing else in the process changes.
const collect = globalThis.gc;
if (!collect) throw new Error('bench/collect-on-signal.mjs needs node --expose-gc');
process.on('SIGUSR2', () => {
  collect();
  collect();
});
