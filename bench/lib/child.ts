/** Parent side of ./server-host.ts: fork a server process and drive it over IPC. */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HOST = path.join(ROOT, 'bench/lib/server-host.ts');

interface Reply {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

export class ServerProcess {
  private seq = 0;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private exited = false;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    child.on('message', (r: Reply) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (r.ok) p.resolve(r.result);
      else p.reject(new Error(`${name}: ${r.error}`));
    });
    child.on('exit', (code) => {
      this.exited = true;
      for (const p of this.pending.values()) p.reject(new Error(`${name} exited (${code})`));
      this.pending.clear();
    });
  }

  /**
   * Fork a server host. BENCH_CPU_PROF=<dir> adds --cpu-prof for processes whose name contains
   * BENCH_CPU_PROF_MATCH (default "atrium"), to find hot spots. `root`: another checkout whose
   * server host (and so whose src/) to run, for an A/B comparison in one run (bench/budget-check.ts).
   */
  static async start(name: string, root = ROOT): Promise<ServerProcess> {
    const profDir = process.env.BENCH_CPU_PROF;
    const prof = profDir && name.includes(process.env.BENCH_CPU_PROF_MATCH || 'atrium') ? ['--cpu-prof', '--cpu-prof-dir', `${profDir}/${name}`] : [];
    const child = fork(root === ROOT ? HOST : path.join(root, 'bench/lib/server-host.ts'), [name], {
      cwd: root,
      execArgv: ['--import', 'tsx', ...prof],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const sp = new ServerProcess(name, child);
    await new Promise<void>((resolve, reject) => {
      sp.pending.set(0, { resolve: () => resolve(), reject });
      child.once('error', reject);
    });
    return sp;
  }

  /** Run a command in the child; rejects after `timeoutMs` so a hung server cannot stall the run. */
  call<T = unknown>(cmd: string, args: Record<string, unknown> = {}, timeoutMs = 120_000): Promise<T> {
    if (this.exited) return Promise.reject(new Error(`${this.name} has exited`));
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.name}: ${cmd} did not answer within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.send({ id, cmd, args });
    });
  }

  /** Close the server cleanly (10 s at most), then end the process. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    try {
      await Promise.race([this.call('close'), exited]);
    } catch {
      // already gone
    }
    if (!this.exited) this.child.disconnect();
    await exited;
    clearTimeout(timer);
  }
}
