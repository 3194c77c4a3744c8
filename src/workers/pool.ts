/**
 * A pool of worker threads for untrusted or heavy work (the ingestion pool, ingest/pool.ts; the
 * image pool, media/pool.ts), so that work never runs on the event loop. Each worker runs under a
 * V8 heap limit (`resourceLimits`), each job under a wall-clock limit that starts once its worker
 * has loaded its modules; a worker that runs out of time or memory, fails or exits is terminated
 * and replaced on demand, and a worker idle for `idleMs` is terminated, so the memory a job took
 * returns. What a job sends, what its answers mean and how it fails are the caller's (`PoolJob`).
 */
import { Worker, type Transferable } from 'node:worker_threads';
import { workerEntry, type WorkerEntry } from '../worker-entry.js';

export interface WorkerPoolOptions {
  /** The worker module, as worker-entry.ts names it ('ingest/worker'). */
  entry: string;
  /** What the pool is called in its errors ('ingestion' → "the ingestion pool is closed"). */
  name: string;
  /** Worker threads at most. */
  workers: number;
  /** V8 old-generation heap limit of each worker, in MiB. */
  maxMemoryMb: number;
  /** Terminate a worker idle this long. */
  idleMs: number;
}

/** What a job's message handler decides: the job's value, or its failure (and whether the worker should go). */
export type Settle<T> = { value: T } | { error: unknown; retire?: boolean };

/** The running job's clock, for a message that changes it. */
export interface JobClock {
  /** The job may now run `limitMs` from the same start; when that runs out it fails with `timedOut()`. */
  extend(limitMs: number, timedOut: () => unknown): void;
}

export interface PoolJob<M, T> {
  /** The message that starts the job in a worker (built when it starts, not while it waits), with what to transfer. */
  start(id: number): { message: unknown; transfer?: Transferable[] };
  /** Wall-clock time the job may take once its worker is ready. */
  timeoutMs: number;
  /** The failure when that time runs out. */
  timedOut(): unknown;
  /** The failure when its worker runs out of memory. */
  outOfMemory(): unknown;
  /** A message of the worker about this job: its end (`Settle`), or undefined for one that does not end it (progress). */
  onMessage(message: M, clock: JobClock): Settle<T> | undefined;
}

export interface WorkerPoolStats {
  /** Live worker threads. */
  workers: number;
  /** Jobs running now. */
  busy: number;
  /** Jobs waiting for a worker. */
  queued: number;
}

interface Job<M> {
  id: number;
  spec: PoolJob<M, unknown>;
  limitMs: number;
  timedOut: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Slot<M> {
  worker: Worker;
  /** The worker has loaded its modules (job clocks start then, so start-up is not counted). */
  ready: boolean;
  job: Job<M> | null;
  timer: NodeJS.Timeout | null;
  /** When the job's clock started (the worker was ready). */
  started: number;
  idleTimer: NodeJS.Timeout | null;
}

/** Messages a worker sends: 'ready' once, then messages about its job, each with the job's id. */
export class WorkerPool<M extends { id: number }> {
  private readonly slots = new Set<Slot<M>>();
  private readonly queue: Job<M>[] = [];
  private nextId = 1;
  private closed = false;
  private entry: WorkerEntry | undefined;
  private readonly size: number;

  constructor(private readonly opts: WorkerPoolOptions) {
    this.size = Math.max(1, opts.workers);
  }

  stats(): WorkerPoolStats {
    let busy = 0;
    for (const s of this.slots) if (s.job) busy++;
    return { workers: this.slots.size, busy, queued: this.queue.length };
  }

  /** Run one job in a worker: it waits for a free worker when all are busy. */
  run<T>(spec: PoolJob<M, T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closedError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        id: this.nextId++,
        spec: spec as PoolJob<M, unknown>,
        limitMs: spec.timeoutMs,
        timedOut: () => spec.timedOut(),
        resolve: resolve as (v: unknown) => void,
        reject,
      });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(this.closedError());
    await Promise.all([...this.slots].map((s) => this.retire(s, this.closedError())));
  }

  private closedError(): Error {
    return new Error(`the ${this.opts.name} pool is closed`);
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot: Slot<M> | undefined;
      for (const s of this.slots) {
        if (!s.job) {
          slot = s;
          break;
        }
      }
      if (!slot && this.slots.size < this.size) slot = this.spawn();
      if (!slot) return;
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot<M> {
    this.entry ??= workerEntry(this.opts.entry);
    const worker = new Worker(this.entry.source, { eval: this.entry.eval, resourceLimits: { maxOldGenerationSizeMb: this.opts.maxMemoryMb } });
    const slot: Slot<M> = { worker, ready: false, job: null, timer: null, started: 0, idleTimer: null };
    this.slots.add(slot);
    worker.on('message', (message: M | 'ready') => {
      if (message === 'ready') {
        slot.ready = true;
        if (slot.job) this.startClock(slot, slot.job);
        return;
      }
      this.message(slot, message);
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const job = slot.job;
      void this.retire(slot, err.code === 'ERR_WORKER_OUT_OF_MEMORY' && job ? job.spec.outOfMemory() : err);
    });
    worker.on('exit', (code) => void this.retire(slot, new Error(`${this.opts.name} worker exited with code ${code}`)));
    return slot;
  }

  private start(slot: Slot<M>, job: Job<M>): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.job = job;
    slot.worker.ref();
    if (slot.ready) this.startClock(slot, job);
    const { message, transfer } = job.spec.start(job.id);
    slot.worker.postMessage(message, transfer);
  }

  private startClock(slot: Slot<M>, job: Job<M>): void {
    slot.started = Date.now();
    this.arm(slot, job);
  }

  private arm(slot: Slot<M>, job: Job<M>): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = setTimeout(() => void this.retire(slot, job.timedOut()), Math.max(0, slot.started + job.limitMs - Date.now()));
  }

  private message(slot: Slot<M>, message: M): void {
    const job = slot.job;
    if (!job || job.id !== message.id) return;
    const clock: JobClock = {
      extend: (limitMs, timedOut) => {
        if (slot.job !== job) return;
        job.limitMs = limitMs;
        job.timedOut = timedOut;
        if (slot.timer) this.arm(slot, job);
      },
    };
    const settled = job.spec.onMessage(message, clock);
    if (!settled) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
    if ('value' in settled) job.resolve(settled.value);
    else job.reject(settled.error);
    if ('error' in settled && settled.retire) {
      // A worker that just refused a hostile input (or failed) may hold a large heap: start afresh.
      void this.retire(slot, null);
    } else {
      slot.worker.unref();
      slot.idleTimer = setTimeout(() => void this.retire(slot, null), this.opts.idleMs);
      slot.idleTimer.unref();
    }
    this.dispatch();
  }

  /** Terminate a worker, failing its job (if any) with `failure`. */
  private async retire(slot: Slot<M>, failure: unknown): Promise<void> {
    if (!this.slots.delete(slot)) return;
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    const job = slot.job;
    slot.job = null;
    if (job) job.reject(failure ?? new Error(`${this.opts.name} worker stopped`));
    await slot.worker.terminate().catch(() => undefined);
    if (!this.closed) this.dispatch();
  }
}
