import { describe, expect, it } from 'vitest';
import type { Change } from '../../src/db/change-feed.js';
import { EventStreams } from '../../src/event-stream/hub.js';
import { MemorySeats } from '../../src/event-stream/seats.js';
import { EventStream } from '../../src/event-stream/stream.js';
import type { StoredEvent } from '../../src/events/schemas.js';

/** This instance's streams (src/event-stream/hub.ts) over a store in memory: heartbeats, order, the end of a stop. */

/** A key's events in memory, as the repository answers them. */
function store() {
  const events: { seq: number; owner: string; event: StoredEvent }[] = [];
  let seq = 0;
  return {
    write(owner: string, type: StoredEvent['type'] = 'order.placed') {
      seq++;
      const event = { id: `evt_${seq}`, type, timestamp: new Date(0).toISOString(), livemode: false, data: {} };
      events.push({ seq, owner, event: event as StoredEvent });
    },
    repository: {
      async heads(owners: readonly string[]) {
        const heads = new Map<string, number>();
        for (const { seq: at, owner } of events) if (owners.includes(owner)) heads.set(owner, at);
        return heads;
      },
      async seqsBetween(owner: string, after: number, head: number) {
        return events.filter((e) => e.owner === owner && e.seq > after && e.seq <= head).map((e) => e.seq);
      },
      async bySeqs(owner: string, seqs: readonly number[]) {
        return events.filter((e) => e.owner === owner && seqs.includes(e.seq));
      },
    },
  };
}

function hub(repository: ReturnType<typeof store>['repository'], ended: string[] = [], heartbeatMs = 60) {
  const listeners: ((change: Change) => void)[] = [];
  return new EventStreams({
    events: repository,
    seats: new MemorySeats(),
    changes: { subscribe: (listener) => listeners.push(listener), check: () => {} },
    revoked: async () => false,
    ending: (stream, by) => void ended.push(`${stream.options.owner} ${by} ${stream.lastId}`),
    log: { warn: () => {} },
    pollMs: 5,
    heartbeatMs,
  });
}

function stream(owner: string, after: { seq: number; id: string } | null = null) {
  const s = new EventStream(
    {
      id: `${owner}-${Math.random()}`,
      owner,
      version: '2026-11-26',
      types: null,
      after,
      dropAfter: null,
      transcript: true,
      graded: null,
    },
    performance.now(),
  );
  s.body.resume();
  return s;
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(done()).toBe(true);
};

describe('the streams of an instance', () => {
  it('send a comment on a stream silent for two thirds of the heartbeat, never a longer silence', async () => {
    const streams = hub(store().repository, [], 60);
    const s = stream('key_a');
    await streams.open(s);
    await until(() => s.transcript.includes(': keep-alive\n\n'));
    await streams.close();
  });

  it("send each key's events once, in order, whether caught up or live, and nothing of another key", async () => {
    const { write, repository } = store();
    const streams = hub(repository);
    write('key_a');
    write('key_b');
    write('key_a');
    const resumed = stream('key_a', { seq: 1, id: 'evt_1' });
    await streams.open(resumed);
    const live = stream('key_a');
    await streams.place(live);
    await streams.open(live);
    write('key_a');
    write('key_b');
    write('key_a');
    await until(() => resumed.lastId === 'evt_6' && live.lastId === 'evt_6');
    const ids = (s: EventStream) => [...s.transcript.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]);
    expect(ids(resumed)).toEqual(['evt_3', 'evt_4', 'evt_6']);
    expect(ids(live)).toEqual(['evt_4', 'evt_6']);
    await streams.close();
  });

  it('end every stream on a stop, each told to the card first with the last id sent, then ended cleanly', async () => {
    const { write, repository } = store();
    const ended: string[] = [];
    const streams = hub(repository, ended);
    const s = stream('key_a');
    await streams.open(s);
    write('key_a');
    await until(() => s.lastId === 'evt_1');
    const finished = new Promise((resolve) => s.body.once('end', resolve));
    await streams.close();
    await finished;
    expect(ended).toEqual(['key_a stop evt_1']);
    expect(s.endedBy).toBe('stop');
  });
});
