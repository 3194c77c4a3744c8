/** Bounded load loops: a fixed number of sequential requests, or a closed loop for a fixed time. */
import { now } from './timer.js';

/** One request; resolves to its latency in ms (or rejects / returns null on a failed request). */
export type Shot = (i: number) => Promise<number | null>;

export interface SequentialResult {
  latencies: number[];
  errors: number;
  firstError: string | null;
}

/** `n` requests one after another (concurrency 1). */
export async function sequential(n: number, shot: Shot): Promise<SequentialResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  for (let i = 0; i < n; i++) {
    try {
      const ms = await shot(i);
      if (ms === null) errors++;
      else latencies.push(ms);
    } catch (err) {
      errors++;
      firstError ??= (err as Error).message;
    }
  }
  return { latencies, errors, firstError };
}

export interface ClosedLoopResult {
  completed: number;
  errors: number;
  firstError: string | null;
  /** completed requests per second over the measured window */
  rps: number;
  elapsedMs: number;
  latencies: number[];
}

/**
 * `concurrency` workers, each sending its next request as soon as the previous one answered,
 * until `durationMs` has passed (no new request starts after that; those in flight finish and
 * count). Bounded: at most durationMs + one request timeout.
 */
export async function closedLoop(opts: { concurrency: number; durationMs: number; shot: Shot }): Promise<ClosedLoopResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  let seq = 0;
  const start = now();
  const end = start + opts.durationMs;
  let last = start;
  const worker = async (): Promise<void> => {
    while (now() < end) {
      try {
        const ms = await opts.shot(seq++);
        if (ms === null) errors++;
        else latencies.push(ms);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
      last = now();
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const elapsedMs = last - start;
  return { completed: latencies.length, errors, firstError, rps: (latencies.length / elapsedMs) * 1000, elapsedMs, latencies };
}
