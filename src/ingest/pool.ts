/**
 * The ingestion pool: worker threads (worker.ts, a WorkerPool of workers/pool.ts) that ingest
 * uploaded files off the event loop, so no upload can stall or crash the server: while a hostile
 * PDF or DOCX is parsed, /healthz and chat turns keep answering. Each worker runs under a V8 heap
 * limit and each file under a wall-clock timeout, extended to the OCR time once the worker says it
 * reads the file by OCR; a worker that times out, runs out of memory or fails is terminated and
 * replaced on demand, and idle workers are terminated, so the memory an upload took returns.
 */
import { observe } from '../observability/hooks.js';
import { WorkerPool, type WorkerPoolStats } from '../workers/pool.js';
import { IngestError } from './errors.js';
import { overLimit, resolveLimits, type IngestLimits } from './limits.js';
import type { IngestOptions, OcrProgress } from './pipeline.js';
import type { IngestedFile, JobOcr, JobRequest, JobResult } from './protocol.js';

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

/** Live worker threads, files being ingested now, files waiting for a worker. */
export type IngestPoolStats = WorkerPoolStats;

export class IngestPool {
  private readonly maxMemoryMb: number;
  private readonly timeoutMs: number;
  private readonly ocrTimeoutMs: number;
  private readonly options: IngestOptions;
  private readonly pool: WorkerPool<JobResult | JobOcr>;

  constructor(opts: IngestPoolOptions = {}) {
    this.maxMemoryMb = opts.maxMemoryMb ?? 512;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.ocrTimeoutMs = opts.ocrTimeoutMs ?? 600_000;
    this.pool = new WorkerPool({
      entry: 'ingest/worker',
      name: 'ingestion',
      workers: opts.workers ?? 2,
      maxMemoryMb: this.maxMemoryMb,
      idleMs: opts.idleMs ?? 10_000,
    });
    // The pool's timeout terminates the worker; the PDF reader's own limit is only a backstop.
    this.options = { limits: resolveLimits(opts.limits), pdfTimeoutMs: Math.max(this.timeoutMs, this.ocrTimeoutMs) + 1000 };
  }

  stats(): IngestPoolStats {
    return this.pool.stats();
  }

  /**
   * Ingest one file in a worker. Rejects with IngestError for bad or over-limit files. `onOcr` hears
   * how far the reading of a scan is.
   */
  ingest(bytes: Uint8Array, filename: string, declaredMime?: string, onOcr?: (progress: OcrProgress) => void): Promise<IngestedFile> {
    const tooLong = (limitMs: number, what: string, cap: 'timeoutMs' | 'ocrTimeoutMs') => () =>
      overLimit(filename, `took longer than ${limitMs / 1000} s ${what}`, `${limitMs / 1000} s per file`, cap);
    let ocr = false;
    const work = () =>
      this.pool.run<IngestedFile>({
        start: (id) => {
          // A copy, transferred: the caller keeps its bytes (they are stored as the file's content).
          const copy = bytes.slice();
          const message: JobRequest = { id, bytes: copy, filename, declaredMime, options: this.options };
          return { message, transfer: [copy.buffer] };
        },
        timeoutMs: this.timeoutMs,
        timedOut: tooLong(this.timeoutMs, 'to read', 'timeoutMs'),
        outOfMemory: () => overLimit(filename, `needs more than ${this.maxMemoryMb} MiB of memory to read`, `${this.maxMemoryMb} MiB`, 'memoryMb'),
        onMessage: (message, clock) => {
          if ('ocr' in message) {
            // The file is being read by OCR: its clock runs to the OCR time from the same start.
            if (!ocr) clock.extend(this.ocrTimeoutMs, tooLong(this.ocrTimeoutMs, 'to read by OCR', 'ocrTimeoutMs'));
            ocr = true;
            onOcr?.(message.ocr);
            return undefined;
          }
          if (message.ok) return { value: message.doc };
          const e = message.error;
          if (e.ingest) return { error: new IngestError(e.kind, e.filename, e.message), retire: e.kind === 'too_large' };
          return { error: Object.assign(new Error(e.message), { name: e.name, stack: e.stack }), retire: true };
        },
      });
    return observe.ingestion(bytes.byteLength, work, (err) => (err instanceof IngestError ? err.kind : 'failed'));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
