/** Monotonic timing helpers (milliseconds, sub-millisecond resolution). */
import { performance } from 'node:perf_hooks';

export const now = (): number => performance.now();

/** Milliseconds since `start` (a value of {@link now}). */
export const since = (start: number): number => performance.now() - start;

/** Run `fn` and return its result with the elapsed milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Wall-clock stopwatch for a whole benchmark phase. */
export function stopwatch(): { elapsedMs(): number; elapsedS(): string } {
  const t = performance.now();
  return {
    elapsedMs: () => performance.now() - t,
    elapsedS: () => `${((performance.now() - t) / 1000).toFixed(1)} s`,
  };
}
