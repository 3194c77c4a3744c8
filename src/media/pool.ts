/**
 * The image pool: worker threads that read untrusted images (worker.ts → inspect.ts), so no image
 * is ever decoded on the event loop and a hostile one cannot stall /healthz or other turns. Each
 * worker runs under a V8 heap limit and each job under a wall-clock timeout; a worker that times
 * out or fails is terminated and replaced on demand, an idle one after a while (its memory returns).
 * The same shape as the ingestion pool (src/ingest/pool.ts), kept apart because its jobs are small
 * and many (up to 8 per turn) and must not queue behind a long document.
 */
import { Worker } from 'node:worker_threads';
import { workerEntry, type WorkerEntry } from '../worker-entry.js';
import { IMAGE_LIMITS, ImageError, type ImageInfo, type ImageLimits } from './types.js';
import type { ImageJob, ImageJobResult } from './protocol.js';

export interface ImagePoolOptions {
  /** worker threads at most (default 2) */
  workers?: number;
  /** wall-clock time one image may take once its worker has started (default 10 000 ms) */
  timeoutMs?: number;
  /** terminate a worker idle this long (default 10 000 ms) */
  idleMs?: number;
  /** V8 old-generation heap of each worker, MiB (default 256) */
  maxMemoryMb?: number;
  limits?: ImageLimits;
}

export interface InspectedImage {
  info: ImageInfo;
  /** the bytes as canonical base64 (what providers are sent and the database decodes) */
  base64: string;
}

interface Job {
  id: number;
  data: string | Uint8Array;
  resolve(r: InspectedImage): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  idleTimer: NodeJS.Timeout | null;
}

export class ImagePool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly idleMs: number;
  private readonly maxMemoryMb: number;
  readonly limits: ImageLimits;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private entry: WorkerEntry | undefined;

  constructor(opts: ImagePoolOptions = {}) {
    this.size = Math.max(1, opts.workers ?? 2);
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.idleMs = opts.idleMs ?? 10_000;
    this.maxMemoryMb = opts.maxMemoryMb ?? 256;
    this.limits = opts.limits ?? IMAGE_LIMITS;
  }

  /** Decodes base64 text (or takes bytes) and reads the image in a worker. Rejects with ImageError for a bad or over-limit image. */
  inspect(data: string | Uint8Array): Promise<InspectedImage> {
    if (this.closed) return Promise.reject(new Error('the image pool is closed'));
    return new Promise<InspectedImage>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, data, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the image pool is closed'));
    await Promise.all([...this.slots].map((s) => this.retire(s, new Error('the image pool is closed'))));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = [...this.slots].find((s) => !s.job);
      if (!slot && this.slots.size < this.size) slot = this.spawn();
      if (!slot) return;
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot {
    this.entry ??= workerEntry('media/worker');
    const worker = new Worker(this.entry.source, { eval: this.entry.eval, resourceLimits: { maxOldGenerationSizeMb: this.maxMemoryMb } });
    const slot: Slot = { worker, ready: false, job: null, timer: null, idleTimer: null };
    this.slots.add(slot);
    worker.on('message', (message: ImageJobResult | 'ready') => {
      if (message !== 'ready') return this.finish(slot, message);
      slot.ready = true;
      if (slot.job) this.startTimer(slot);
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const failure = err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new ImageError('too_large', 'The image needs too much memory to read') : err;
      void this.retire(slot, failure);
    });
    worker.on('exit', (code) => void this.retire(slot, new Error(`image worker exited with code ${code}`)));
    return slot;
  }

  private start(slot: Slot, job: Job): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.job = job;
    slot.worker.ref();
    if (slot.ready) this.startTimer(slot);
    const message: ImageJob = { id: job.id, data: job.data, limits: this.limits };
    slot.worker.postMessage(message);
  }

  private startTimer(slot: Slot): void {
    slot.timer = setTimeout(() => {
      void this.retire(slot, new ImageError('too_large', `The image took longer than ${this.timeoutMs / 1000} s to read`));
    }, this.timeoutMs);
  }

  private finish(slot: Slot, result: ImageJobResult): void {
    const job = slot.job;
    if (!job || job.id !== result.id) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
    if (result.ok) job.resolve({ info: result.info, base64: result.base64 });
    else job.reject(new ImageError(result.kind, result.message));
    slot.worker.unref();
    slot.idleTimer = setTimeout(() => void this.retire(slot, null), this.idleMs);
    slot.idleTimer.unref();
    this.dispatch();
  }

  private async retire(slot: Slot, failure: unknown): Promise<void> {
    if (!this.slots.delete(slot)) return;
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    const job = slot.job;
    slot.job = null;
    if (job) job.reject(failure ?? new Error('image worker stopped'));
    await slot.worker.terminate().catch(() => undefined);
    if (!this.closed) this.dispatch();
  }
}
