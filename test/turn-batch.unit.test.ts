import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TurnBatch } from '../src/turn-batch.js';

describe('a turn batch', () => {
  it("hands over the items of one turn together, after the turn's I/O, and the next turn's apart", async () => {
    const groups: number[][] = [];
    const batch = new TurnBatch<number>((items) => void groups.push(items));
    batch.add(1);
    batch.add(2);
    expect(groups).toEqual([]);
    await nextTurn();
    batch.add(3);
    await nextTurn();
    expect(groups).toEqual([[1, 2], [3]]);
  });

  it('with an asynchronous hand-over, gathers what arrives meanwhile for one group after it', async () => {
    const groups: number[][] = [];
    let finish = () => {};
    const batch = new TurnBatch<number>((items) => {
      groups.push(items);
      return new Promise<void>((resolve) => (finish = resolve));
    });
    batch.add(1);
    await nextTurn();
    batch.add(2);
    await nextTurn();
    batch.add(3);
    await nextTurn();
    expect(groups).toEqual([[1]]);
    finish();
    await nextTurn();
    await nextTurn();
    expect(groups).toEqual([[1], [2, 3]]);
  });

  it('hands over at once on flush, and goes on after a hand-over that threw', async () => {
    const groups: number[][] = [];
    const batch = new TurnBatch<number>((items) => {
      groups.push(items);
      if (items.includes(0)) throw new Error('failed');
    });
    batch.add(1);
    batch.flush();
    expect(groups).toEqual([[1]]);
    batch.add(0);
    const thrown = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
    await expect(thrown).resolves.toBeInstanceOf(Error);
    batch.add(2);
    await nextTurn();
    expect(groups).toEqual([[1], [0], [2]]);
  });
});
