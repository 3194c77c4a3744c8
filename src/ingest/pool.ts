/**
 * A small pool of worker threads that ingest uploaded files off the event loop, so no upload
 * can stall or crash the server: while a hostile PDF or DOCX is parsed, /healthz and chat turns
 * keep answering. Each worker runs under a V8 heap limit (`resourceLimits`), and each job under
 * a wall-clock timeout; a worker that times out, runs out of memory or fails is terminated and
 * replaced on demand, and idle workers are terminated, so the memory an upload took returns.
 *
 * The worker entry is resolved next to this module: `worker.js` when running compiled
 * JavaScript (dist/), otherwise `worker.ts` loaded through tsx (tests via vitest, dev via tsx).
 */
import { Worker } from 'node:worker_threads';
import { observe } from '../observability/hooks.js';
import { workerEntry, type WorkerEntry } from '../worker-entry.js';
import { IngestError } from './errors.js';
import { overLimit, resolveLimits, type IngestLimits } from './limits.js';
import type { IngestedDocument, IngestOptions, OcrProgress } from './pipeline.js';
import type { JobOcr, JobRequest, JobResult } from './protocol.js';

export interface IngestPoolOptions {
  /** Worker threads at most (default 2). */
  workers?: number;
  /** V8 old-generation heap limit of each worker, in MiB (default 512). */
  maxMemoryMb?: number;
  /** Wall-clock time one file may take in a started worker (default 60 000 ms). */
  timeoutMs?: number;
  /** The same for a file read by OCR, from the start of the file (default 600 000 ms). */
  ocrTimeoutMs?: number;
  /** Terminate a worker idle this long (default 10 000 ms). */
  idleMs?: number;
  limits?: Partial<IngestLimits>;
}

export interface IngestPoolStats {
  /** Live worker threads. */
  workers: number;
  /** Files being ingested now. */
  busy: number;
  /** Files waiting for a worker. */
  queued: number;
}

interface Job {
  id: number;
  bytes: Uint8Array;
  filename: string;
  declaredMime: string | undefined;
  /** The file is being read by OCR: told before the first page and after each page. */
  onOcr: ((progress: OcrProgress) => void) | undefined;
  /** The OCR time limit applies (the worker said it reads the file by OCR). */
  ocr: boolean;
  resolve(doc: IngestedDocument): void;
  reject(err: unknown): void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded its modules (job timers start then, so start-up is not counted). */
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  /** When the job's clock started (the worker was ready). */
  started: number;
  idleTimer: NodeJS.Timeout | null;
}

export class IngestPool {
  private readonly size: number;
  private readonly maxMemoryMb: number;
  private readonly timeoutMs: number;
  private readonly ocrTimeoutMs: number;
  private readonly idleMs: number;
  private readonly options: IngestOptions;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private entry: WorkerEntry | undefined;

  constructor(opts: IngestPoolOptions = {}) {
    this.size = Math.max(1, opts.workers ?? 2);
    this.maxMemoryMb = opts.maxMemoryMb ?? 512;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.ocrTimeoutMs = opts.ocrTimeoutMs ?? 600_000;
    this.idleMs = opts.idleMs ?? 10_000;
    // The pool's timeout terminates the worker; the PDF reader's own limit is only a backstop.
    this.options = { limits: resolveLimits(opts.limits), pdfTimeoutMs: Math.max(this.timeoutMs, this.ocrTimeoutMs) + 1000 };
  }

  stats(): IngestPoolStats {
    let busy = 0;
    for (const s of this.slots) if (s.job) busy++;
    return { workers: this.slots.size, busy, queued: this.queue.length };
  }

  /**
   * Ingest one file in a worker. Rejects with IngestError for bad or over-limit files. `onOcr` hears
   * how far the reading of a scan is.
   */
  ingest(bytes: Uint8Array, filename: string, declaredMime?: string, onOcr?: (progress: OcrProgress) => void): Promise<IngestedDocument> {
    if (this.closed) return Promise.reject(new Error('the ingestion pool is closed'));
    const work = () =>
      new Promise<IngestedDocument>((resolve, reject) => {
        this.queue.push({ id: this.nextId++, bytes, filename, declaredMime, onOcr, ocr: false, resolve, reject });
        this.dispatch();
      });
    return observe.ingestion(bytes.byteLength, work, (err) => (err instanceof IngestError ? err.kind : 'failed'));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the ingestion pool is closed'));
    await Promise.all([...this.slots].map((s) => this.retire(s, new Error('the ingestion pool is closed'))));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot: Slot | undefined;
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

  private spawn(): Slot {
    this.entry ??= workerEntry('ingest/worker');
    const worker = new Worker(this.entry.source, {
      eval: this.entry.eval,
      resourceLimits: { maxOldGenerationSizeMb: this.maxMemoryMb },
    });
    const slot: Slot = { worker, ready: false, job: null, timer: null, started: 0, idleTimer: null };
    this.slots.add(slot);
    worker.on('message', (message: JobResult | JobOcr | 'ready') => {
      if (message !== 'ready') return 'ocr' in message ? this.extendForOcr(slot, message) : this.finish(slot, message);
      slot.ready = true;
      if (slot.job) this.startTimer(slot, slot.job);
    });
    worker.on('error', (err: Error & { code?: string }) => {
      const job = slot.job;
      const failure =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY' && job
          ? overLimit(job.filename, `needs more than ${this.maxMemoryMb} MiB of memory to read`, `${this.maxMemoryMb} MiB`, 'memoryMb')
          : err;
      void this.retire(slot, failure);
    });
    worker.on('exit', (code) => {
      void this.retire(slot, new Error(`ingestion worker exited with code ${code}`));
    });
    return slot;
  }

  private start(slot: Slot, job: Job): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.job = job;
    slot.worker.ref();
    if (slot.ready) this.startTimer(slot, job);
    // A copy, transferred: the caller keeps its bytes (they are stored as the file's content).
    const bytes = job.bytes.slice();
    const request: JobRequest = { id: job.id, bytes, filename: job.filename, declaredMime: job.declaredMime, options: this.options };
    slot.worker.postMessage(request, [bytes.buffer]);
  }

  private startTimer(slot: Slot, job: Job): void {
    slot.started = Date.now();
    this.arm(slot, job, this.timeoutMs, 'timeoutMs');
  }

  /** The file is being read by OCR: its clock runs to the OCR time from the same start. */
  private extendForOcr(slot: Slot, message: JobOcr): void {
    const job = slot.job;
    if (!job || job.id !== message.id) return;
    if (!job.ocr && slot.timer) {
      job.ocr = true;
      clearTimeout(slot.timer);
      this.arm(slot, job, this.ocrTimeoutMs, 'ocrTimeoutMs');
    }
    job.onOcr?.(message.ocr);
  }

  private arm(slot: Slot, job: Job, limitMs: number, cap: 'timeoutMs' | 'ocrTimeoutMs'): void {
    const what = cap === 'ocrTimeoutMs' ? 'to read by OCR' : 'to read';
    slot.timer = setTimeout(
      () => {
        const seconds = limitMs / 1000;
        void this.retire(slot, overLimit(job.filename, `took longer than ${seconds} s ${what}`, `${seconds} s per file`, cap));
      },
      Math.max(0, slot.started + limitMs - Date.now()),
    );
  }

  private finish(slot: Slot, result: JobResult): void {
    const job = slot.job;
    if (!job || job.id !== result.id) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
    if (result.ok) job.resolve(result.doc);
    else if (result.error.ingest) job.reject(new IngestError(result.error.kind, result.error.filename, result.error.message));
    else job.reject(Object.assign(new Error(result.error.message), { name: result.error.name, stack: result.error.stack }));
    if (!result.ok && (!result.error.ingest || result.error.kind === 'too_large')) {
      // A worker that just refused a hostile file (or failed) may hold a large heap: start afresh.
      void this.retire(slot, null);
    } else {
      slot.worker.unref();
      slot.idleTimer = setTimeout(() => void this.retire(slot, null), this.idleMs);
      slot.idleTimer.unref();
    }
    this.dispatch();
  }

  /** Terminate a worker, failing its job (if any) with `failure`. */
  private async retire(slot: Slot, failure: unknown): Promise<void> {
    if (!this.slots.delete(slot)) return;
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    const job = slot.job;
    slot.job = null;
    if (job) job.reject(failure ?? new Error('ingestion worker stopped'));
    await slot.worker.terminate().catch(() => undefined);
    if (!this.closed) this.dispatch();
  }
}
