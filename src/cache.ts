/**
 * A small in-process cache with a time-to-live. Used for reads every request repeats (API key →
 * principal, workspace → settings, model → provider target). Writes on this node invalidate at
 * once; other nodes sharing the database see a change within the TTL (docs/DECISIONS.md).
 *
 * `load` reads through it and refreshes ahead: a hit in the second half of its life is answered
 * from the cache while one reload runs beside it, so a steady stream of requests never waits for
 * the database once the key is warm (on the embedded database's one connection, a reload would
 * otherwise queue behind whatever long statement runs). No answer is older than the TTL: an
 * entry past it is never returned, and a reload that started before an invalidation is dropped.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();
  /** loads in flight, one per key: concurrent misses share it, and a warm key refreshes once */
  private readonly loading = new Map<K, Promise<V | undefined>>();
  /** raised by every invalidation: a load that began under an older generation is not kept */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly max = 10_000,
  ) {}

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  /**
   * The cached value, or `fetch`'s (kept unless it is `undefined`). A hit past half its TTL also
   * starts one background `fetch` that replaces it; that reload's failure is dropped (the entry
   * then simply expires, and the next miss sees the error).
   */
  load(key: K, fetch: () => Promise<V>): Promise<V>;
  load(key: K, fetch: () => Promise<V | undefined>): Promise<V | undefined>;
  async load(key: K, fetch: () => Promise<V | undefined>): Promise<V | undefined> {
    if (this.ttlMs <= 0) return fetch(); // nothing kept, nothing shared: every call reads
    const hit = this.entries.get(key);
    const now = Date.now();
    if (hit && hit.until > now) {
      if (hit.until - now <= this.ttlMs / 2 && !this.loading.has(key)) this.start(key, fetch).catch(() => undefined);
      return hit.value;
    }
    return this.loading.get(key) ?? this.start(key, fetch);
  }

  private start(key: K, fetch: () => Promise<V | undefined>): Promise<V | undefined> {
    const generation = this.generation;
    const done = () => {
      if (this.loading.get(key) === p) this.loading.delete(key);
    };
    const p: Promise<V | undefined> = fetch().then(
      (value) => {
        done();
        if (value !== undefined && generation === this.generation) this.set(key, value);
        return value;
      },
      (error: unknown) => {
        done();
        throw error;
      },
    );
    this.loading.set(key, p);
    return p;
  }

  set(key: K, value: V): void {
    if (this.ttlMs <= 0) return; // a cache of no time keeps nothing
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, { value, until: Date.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.invalidate();
    this.entries.delete(key);
  }

  clear(): void {
    this.invalidate();
    this.entries.clear();
  }

  /** Drop every entry whose value matches (e.g. all cached principals of one user). */
  deleteWhere(pred: (value: V, key: K) => boolean): void {
    this.invalidate();
    for (const [k, e] of this.entries) if (pred(e.value, k)) this.entries.delete(k);
  }

  /** Loads in flight were read before this change: they may still answer their callers, but are not kept, nor shared. */
  private invalidate(): void {
    this.generation++;
    this.loading.clear();
  }
}
