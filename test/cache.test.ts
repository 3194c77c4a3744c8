import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TtlCache } from '../src/cache.js';

/** A fetch whose calls are counted and whose answers the test releases one by one. */
function gated<V>() {
  const pending: { resolve: (v: V | undefined) => void; reject: (e: unknown) => void }[] = [];
  const fetch = vi.fn(
    () =>
      new Promise<V | undefined>((resolve, reject) => {
        pending.push({ resolve, reject });
      }),
  );
  return { fetch, pending };
}

const settle = () => new Promise((r) => setImmediate(r));

/** A cache of 1 s holding `value` for 'k' at time 0, read by the first call of its gated fetch. */
async function warm(value: number) {
  const cache = new TtlCache<string, number>(1000);
  const { fetch, pending } = gated<number>();
  const first = cache.load('k', fetch);
  pending[0]!.resolve(value);
  await first;
  return { cache, fetch, pending };
}

describe('TtlCache.load', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shares one read among concurrent misses and keeps its value', async () => {
    const cache = new TtlCache<string, number>(1000);
    const { fetch, pending } = gated<number>();
    const a = cache.load('k', fetch);
    const b = cache.load('k', fetch);
    expect(fetch).toHaveBeenCalledTimes(1);
    pending[0]!.resolve(7);
    expect(await Promise.all([a, b])).toEqual([7, 7]);
    expect(await cache.load('k', fetch)).toBe(7);
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('answers a hit past half its life at once and reloads it once, beside the answer', async () => {
    const { cache, fetch, pending } = await warm(1);
    vi.setSystemTime(400);
    expect(await cache.load('k', fetch)).toBe(1);
    expect(fetch).toHaveBeenCalledTimes(1); // young: no reload
    vi.setSystemTime(600);
    expect(await cache.load('k', fetch)).toBe(1); // answered while the reload has not come back
    expect(await cache.load('k', fetch)).toBe(1);
    expect(fetch).toHaveBeenCalledTimes(2); // one reload, however many hits
    pending[1]!.resolve(2);
    await settle();
    vi.setSystemTime(1500); // past the first value's life, within the reload's
    expect(await cache.load('k', fetch)).toBe(2);
  });

  it('never answers past the TTL: an expired entry waits for a read', async () => {
    const { cache, fetch, pending } = await warm(1);
    vi.setSystemTime(1000);
    const later = cache.load('k', fetch);
    expect(fetch).toHaveBeenCalledTimes(2);
    pending[1]!.resolve(5);
    expect(await later).toBe(5);
  });

  it('does not keep a read that began before an invalidation', async () => {
    const cache = new TtlCache<string, number>(1000);
    const { fetch, pending } = gated<number>();
    const stale = cache.load('k', fetch);
    cache.delete('k'); // a write on this node, while the read was under way
    const fresh = cache.load('k', fetch); // not shared with the older read
    expect(fetch).toHaveBeenCalledTimes(2);
    pending[0]!.resolve(1);
    expect(await stale).toBe(1); // its own caller still gets it
    pending[1]!.resolve(2);
    expect(await fresh).toBe(2);
    expect(await cache.load('k', fetch)).toBe(2);

    // the same for a background reload: a hit past half its life, then deleteWhere
    vi.setSystemTime(600);
    expect(await cache.load('k', fetch)).toBe(2);
    expect(fetch).toHaveBeenCalledTimes(3);
    cache.deleteWhere(() => false); // matches nothing, yet the reload began before it
    pending[2]!.resolve(3);
    await settle();
    expect(await cache.load('k', fetch)).toBe(2);
  });

  it('drops a failed reload: the entry is answered until it expires, then the error is seen', async () => {
    const { cache, fetch, pending } = await warm(1);
    vi.setSystemTime(700);
    expect(await cache.load('k', fetch)).toBe(1);
    pending[1]!.reject(new Error('database down'));
    await settle();
    expect(await cache.load('k', fetch)).toBe(1); // a new reload starts; the old value still answers
    expect(fetch).toHaveBeenCalledTimes(3);
    pending[2]!.reject(new Error('database down'));
    await settle();
    vi.setSystemTime(1000);
    const miss = cache.load('k', fetch);
    pending[3]!.reject(new Error('database down'));
    await expect(miss).rejects.toThrow('database down');
  });

  it('keeps no undefined answer, and with no TTL reads every time', async () => {
    const cache = new TtlCache<string, number>(1000);
    const none = vi.fn(async () => undefined);
    expect(await cache.load('k', none)).toBeUndefined();
    expect(await cache.load('k', none)).toBeUndefined();
    expect(none).toHaveBeenCalledTimes(2);

    const off = new TtlCache<string, number>(0);
    const { fetch, pending } = gated<number>();
    const a = off.load('k', fetch);
    const b = off.load('k', fetch);
    expect(fetch).toHaveBeenCalledTimes(2); // not even shared: a revoked key must fail at once
    pending[0]!.resolve(1);
    pending[1]!.resolve(2);
    expect(await Promise.all([a, b])).toEqual([1, 2]);
  });
});
