import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../src/db/group-commit.js';

describe('GroupCommit', () => {
  it('writes a lone item at once and gathers concurrent ones into batches', async () => {
    const batches: number[][] = [];
    const gc = new GroupCommit<number>(async (items) => {
      batches.push(items);
      await new Promise((r) => setTimeout(r, 5));
    });
    await gc.add(0);
    expect(batches).toEqual([[0]]);
    await Promise.all(Array.from({ length: 20 }, (_, i) => gc.add(i + 1)));
    expect(
      batches
        .slice(1)
        .flat()
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(batches.length).toBeLessThan(1 + 20);
  });

  it('tells each item when its batch is handed to the write, before the write ends', async () => {
    const events: string[] = [];
    let finish!: () => void;
    const gc = new GroupCommit<string>(async (items) => {
      events.push(`write ${items.join('+')}`);
      await new Promise<void>((r) => (finish = r));
    });
    const first = gc.add('a', () => events.push('sent a'));
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual(['write a', 'sent a']);
    // b waits for a's write to end: it is not sent before its own batch starts
    const second = gc.add('b', () => events.push('sent b'));
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual(['write a', 'sent a']);
    finish();
    await first;
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual(['write a', 'sent a', 'write b', 'sent b']);
    finish();
    await second;
  });

  it('fails only the item that cannot be written', async () => {
    const written: number[] = [];
    const gc = new GroupCommit<number>(async (items) => {
      if (items.includes(13)) throw new Error('bad item');
      written.push(...items);
    });
    const results = await Promise.allSettled([1, 2, 13, 4].map((i) => gc.add(i)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(written.sort((a, b) => a - b)).toEqual([1, 2, 4]);
  });

  it('with retryOne, retries each item of a failed batch through it, a lone item too', async () => {
    const retried: number[] = [];
    const gc = new GroupCommit<number, string>(
      async (items) => {
        if (items.includes(13)) throw new Error('bad batch');
        return items.map((i) => `batch ${i}`);
      },
      128,
      async (i) => {
        retried.push(i);
        if (i === 13) throw new Error('still bad');
        return `retried ${i}`;
      },
    );
    expect(await Promise.allSettled([gc.add(13)])).toMatchObject([{ status: 'rejected' }]);
    expect(retried).toEqual([13]);
    retried.length = 0;
    await gc.add(0); // (the next items gather behind it)
    const results = await Promise.allSettled([1, 13, 2].map((i) => gc.add(i)));
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual(['retried 1', 'rejected', 'retried 2']);
    expect(retried).toEqual([1, 13, 2]);
  });

  it("writes what was queued behind a failed batch without waiting for that batch's retries", async () => {
    let releaseRetry!: () => void;
    const retryHeld = new Promise<void>((r) => (releaseRetry = r));
    const written: number[] = [];
    const gc = new GroupCommit<number, string>(
      async (items) => {
        if (items.includes(13)) throw new Error('bad batch');
        written.push(...items);
        return items.map((i) => `batch ${i}`);
      },
      128,
      async (i) => {
        await retryHeld;
        return `retried ${i}`;
      },
    );
    const failed = gc.add(13);
    await new Promise((r) => setImmediate(r)); // 13's batch is sent, and fails
    expect(await gc.add(7)).toBe('batch 7'); // written while 13's retry is still held
    expect(written).toEqual([7]);
    releaseRetry();
    expect(await failed).toBe('retried 13');
  });

  it('respects the batch size', async () => {
    const sizes: number[] = [];
    const gc = new GroupCommit<number>(async (items) => {
      sizes.push(items.length);
    }, 4);
    await Promise.all(Array.from({ length: 10 }, (_, i) => gc.add(i)));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(10);
  });
});
