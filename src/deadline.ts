/**
 * `run` under a deadline: its signal aborts after `ms` with the reason `AbortSignal.timeout` gives
 * (a `TimeoutError`), and the timer is cleared as soon as `run` settles. `AbortSignal.timeout`'s
 * own timer stays armed for the whole time after an early answer, so a closed app would still
 * hold it.
 */
export async function withDeadline<T>(ms: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
  try {
    return await run(abort.signal);
  } finally {
    clearTimeout(timer);
  }
}
