/**
 * The image pool: worker threads that read untrusted images (worker.ts → inspect.ts), so no image
 * is ever decoded on the event loop and a hostile one cannot stall /healthz or other turns. Each
 * worker runs under a V8 heap limit and each job under a wall-clock timeout; a worker that times
 * out or fails is terminated and replaced on demand, an idle one after a while (its memory returns).
 * A WorkerPool (workers/pool.ts) of its own, apart from the ingestion pool's, because its jobs are
 * small and many (up to 8 per turn) and must not queue behind a long document.
 */
import { WorkerPool } from '../workers/pool.js';
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

export class ImagePool {
  private readonly timeoutMs: number;
  readonly limits: ImageLimits;
  private readonly pool: WorkerPool<ImageJobResult>;

  constructor(opts: ImagePoolOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.limits = opts.limits ?? IMAGE_LIMITS;
    this.pool = new WorkerPool({
      entry: 'media/worker',
      name: 'image',
      workers: opts.workers ?? 2,
      maxMemoryMb: opts.maxMemoryMb ?? 256,
      idleMs: opts.idleMs ?? 10_000,
    });
  }

  /** Decodes base64 text (or takes bytes) and reads the image in a worker. Rejects with ImageError for a bad or over-limit image. */
  inspect(data: string | Uint8Array): Promise<InspectedImage> {
    return this.pool.run<InspectedImage>({
      start: (id) => ({ message: { id, data, limits: this.limits } satisfies ImageJob }),
      timeoutMs: this.timeoutMs,
      timedOut: () => new ImageError('too_large', `The image took longer than ${this.timeoutMs / 1000} s to read`),
      outOfMemory: () => new ImageError('too_large', 'The image needs too much memory to read'),
      onMessage: (result) => (result.ok ? { value: { info: result.info, base64: result.base64 } } : { error: new ImageError(result.kind, result.message) }),
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
