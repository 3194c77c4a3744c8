/**
 * Run `task` now and then every `everyMs` on this node (a background sweep), errors to `onError`;
 * returns the function that stops it, which waits for a run in progress. The timer does not keep
 * the process alive.
 */
export function runPeriodically(everyMs: number, task: () => Promise<unknown>, onError: (err: unknown) => void): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = task().catch(onError);
  };
  run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
