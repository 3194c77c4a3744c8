/**
 * Work compiled on first use instead of at start-up (request validators, response serializers),
 * and the rest compiled in the background once the server is ready: `warm()` compiles one item per
 * event-loop turn, so requests keep flowing meanwhile. An item whose compile throws is dropped from
 * the queue; it fails its own route's requests when they call it, never the process.
 */
export class CompileQueue {
  private readonly waiting = new Set<() => unknown>();

  /** A getter that compiles on its first call; `queued: false` leaves it to that call alone. */
  defer<T>(compile: () => T, queued = true): () => T {
    let done = false;
    let value: T;
    const ready = (): T => {
      if (!done) {
        value = compile();
        done = true;
        this.waiting.delete(ready);
      }
      return value;
    };
    if (queued) this.waiting.add(ready);
    return ready;
  }

  readonly warm = (): void => {
    const next = this.waiting.values().next();
    if (next.done) return;
    try {
      next.value();
    } catch {
      this.waiting.delete(next.value);
    }
    setImmediate(this.warm);
  };

  pending(): number {
    return this.waiting.size;
  }
}
