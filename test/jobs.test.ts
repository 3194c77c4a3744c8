import { describe, expect, it } from 'vitest';
import { closing, Jobs, periodic, type Job } from '../src/jobs.js';

/** The app's background jobs: started in order, stopped in the reverse one, each whatever the others do. */
function recorded(name: string, log: string[], fail = false): Job {
  return {
    name,
    start: () => void log.push(`start ${name}`),
    stop: async () => {
      log.push(`stop ${name}`);
      if (fail) throw new Error(`${name} failed`);
    },
  };
}

describe('Jobs', () => {
  it('starts in order and stops in the reverse order, once however often it is asked', async () => {
    const log: string[] = [];
    const jobs = new Jobs([recorded('database', log), recorded('pool', log), recorded('sweep', log)]);
    await jobs.start();
    await Promise.all([jobs.stop(() => undefined), jobs.stop(() => undefined)]);
    expect(log).toEqual(['start database', 'start pool', 'start sweep', 'stop sweep', 'stop pool', 'stop database']);
  });

  it('reports a job that fails to stop and still stops the others', async () => {
    const log: string[] = [];
    const failures: string[] = [];
    const jobs = new Jobs([recorded('database', log), recorded('pool', log, true), closing('sweep', async () => void log.push('stop sweep'))]);
    await jobs.stop((err, name) => failures.push(`${name}: ${(err as Error).message}`));
    expect(log).toEqual(['stop sweep', 'stop pool', 'stop database']);
    expect(failures).toEqual(['pool: pool failed']);
  });

  it('a periodic job runs at start, and its stop waits for the run in progress', async () => {
    let finish: () => void = () => {};
    const events: string[] = [];
    const job = periodic(
      'sweep',
      3_600_000,
      () =>
        new Promise<void>((resolve) => {
          events.push('run');
          finish = () => {
            events.push('finished');
            resolve();
          };
        }),
      () => undefined,
    );
    void job.start();
    expect(events).toEqual(['run']);
    const stopped = job.stop().then(() => events.push('stopped'));
    await Promise.resolve();
    expect(events).toEqual(['run']);
    finish();
    await stopped;
    expect(events).toEqual(['run', 'finished', 'stopped']);
  });

  it('a periodic job skips its ticks while a run is still going', async () => {
    let runs = 0;
    let finish: () => void = () => {};
    const job = periodic(
      'upkeep',
      5,
      () =>
        new Promise<void>((resolve) => {
          runs++;
          finish = resolve;
        }),
      () => undefined,
    );
    void job.start();
    await new Promise((r) => setTimeout(r, 60)); // about a dozen ticks while the first run waits
    expect(runs).toBe(1);
    finish();
    await new Promise((r) => setTimeout(r, 60));
    expect(runs).toBeGreaterThan(1); // the next tick after it ended ran again
    finish();
    await job.stop();
  });
});
