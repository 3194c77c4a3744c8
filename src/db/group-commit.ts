/**
 * Group commit: writes that arrive while one is being flushed are gathered and flushed together
 * in one statement, so under concurrency many turns share one round trip and one commit, while a
 * lone write still goes out on the next tick. Each caller's promise settles when its own write is
 * durable, with its own result (`write` answers one result per item, in order). If a batch fails,
 * its items are retried one by one so a bad item fails alone: with `write([item])`, or with
 * `retryOne` when given (then a lone item's failure is retried too), which can first ask whether
 * the failed statement took effect anyway. The retries run beside the batches queued after the
 * failed one, which do not wait for them. `onSent` is told when an item's
 * batch is handed to `write`: on the embedded database, whose one connection runs statements in
 * the order they are sent, every statement sent after that moment sees the item's write.
 */
interface Queued<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
  onSent: (() => void) | undefined;
}

export class GroupCommit<T, R = void> {
  private queue: Array<Queued<T, R>> = [];
  private flushing = false;

  constructor(
    private readonly write: (items: T[]) => Promise<readonly R[] | void>,
    private readonly maxBatch = 128,
    private readonly retryOne: ((item: T) => Promise<R>) | null = null,
  ) {}

  add(item: T, onSent?: () => void): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject, onSent });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const written = this.write(batch.map((b) => b.item));
        for (const b of batch) b.onSent?.();
        const results = await written;
        batch.forEach((b, i) => b.resolve(results?.[i] as R));
      } catch (err) {
        if (batch.length === 1 && !this.retryOne) {
          batch[0]!.reject(err);
          continue;
        }
        // Beside the loop, so that the writes queued behind the failed batch go on meanwhile.
        void this.retryEach(batch);
      }
    }
    this.flushing = false;
  }

  /** A failed batch's items, one at a time (never throws: each item's own promise settles). */
  private async retryEach(batch: Array<Queued<T, R>>): Promise<void> {
    for (const b of batch) {
      try {
        b.resolve(this.retryOne ? await this.retryOne(b.item) : ((await this.write([b.item]))?.[0] as R));
      } catch (e) {
        b.reject(e);
      }
    }
  }
}
