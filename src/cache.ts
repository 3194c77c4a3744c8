/**
 * A small in-process cache with a time-to-live. Used for reads every request repeats (API key →
 * principal, workspace → settings, model → provider target). Writes on this node invalidate at
 * once; other nodes sharing the database see a change within the TTL (docs/DECISIONS.md).
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();

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

  set(key: K, value: V): void {
    if (this.ttlMs <= 0) return; // a cache of no time keeps nothing
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, { value, until: Date.now() + this.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Drop every entry whose value matches (e.g. all cached principals of one user). */
  deleteWhere(pred: (value: V, key: K) => boolean): void {
    for (const [k, e] of this.entries) if (pred(e.value, k)) this.entries.delete(k);
  }
}
