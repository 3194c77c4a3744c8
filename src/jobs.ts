/**
 * What runs in the background of an app (sweeps, workers, pools, connections, the database
 * itself), behind one interface: buildApp starts them in order once the app is ready and its
 * `onClose` stops them in the reverse order, so a closed app leaves no timer or worker behind.
 */
export interface Job {
  /** for the log when stopping it fails */
  readonly name: string;
  start(): void | Promise<void>;
  /** Stop, waiting for work in progress; safe when never started. */
  stop(): Promise<void>;
}

/**
 * Run `task` at start and then every `everyMs` on this node (a background sweep), errors to
 * `onError`; a tick while the last run is still going is skipped (upkeep can wait minutes for a
 * lull), and stop waits for the run in progress. The timer does not keep the process alive.
 */
export function periodic(name: string, everyMs: number, task: () => Promise<unknown>, onError: (err: unknown) => void): Job {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;
  const run = () => {
    if (running) return;
    running = task()
      .catch(onError)
      .finally(() => (running = null));
  };
  return {
    name,
    start() {
      run();
      timer = setInterval(run, everyMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}

/** Something started by a function that returns its stop function (a service's own worker). */
export function startedBy(name: string, start: () => () => Promise<void>): Job {
  let stop: (() => Promise<void>) | null = null;
  return {
    name,
    start() {
      stop = start();
    },
    async stop() {
      const s = stop;
      stop = null;
      await s?.();
    },
  };
}

/** A resource that starts on first use (a worker pool, connections, the database): only closed. */
export function closing(name: string, close: () => Promise<void>): Job {
  return { name, start() {}, stop: close };
}

/** Jobs started in their order and stopped in the reverse one. */
export class Jobs {
  private stopping: Promise<void> | null = null;

  constructor(private readonly jobs: readonly Job[]) {}

  /** Start each in order (a failure is thrown; `stop` then cleans up). */
  async start(): Promise<void> {
    for (const job of this.jobs) await job.start();
  }

  /**
   * Stop every job, the last first; each is awaited before the next, and one that fails is
   * reported without keeping the others running. Jobs never started are stopped too (stopping a
   * job that never started is safe), so this also cleans up after a failed start-up. Called
   * again, it waits for the first call.
   */
  stop(onError: (err: unknown, name: string) => void): Promise<void> {
    this.stopping ??= this.stopAll(onError);
    return this.stopping;
  }

  private async stopAll(onError: (err: unknown, name: string) => void): Promise<void> {
    for (const job of [...this.jobs].reverse()) {
      try {
        await job.stop();
      } catch (err) {
        onError(err, job.name);
      }
    }
  }
}
