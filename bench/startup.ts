/**
 * Start-up: the real `npm start` command (compiled JavaScript, `node dist/main.js` behind npm),
 * spawned cold RUNS times per case with a fresh PORT; the time from spawn to the first 200 of
 * `/healthz` (port bound) and of `/readyz` (database open and migrated, routes ready), median of
 * the runs. Cases: an empty data folder (first start of the embedded database) and an existing
 * one. References measured in the same run: `node dist/main.js` without npm (npm's own start-up
 * is part of the contract's command but not Atrium's), the previous command (`tsx src/main.ts`,
 * TypeScript compiled at every start), and a bare node:http server (the floor of spawning Node).
 *
 * The build is refreshed first (`npm run build`), so the figures are those of the current source.
 * Run alone: npx tsx bench/startup.ts
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './lib/child.js';
import { renderSection, type Row, type Section, type TargetRow } from './lib/report.js';
import { median, round, verdict } from './lib/stats.js';
import { now, since, sleep, stopwatch } from './lib/timer.js';

const RUNS = 5;
const TARGET_EXISTING_READY_MS = 1000;
const TARGET_EMPTY_READY_MS = 3000;
/** A start that takes longer than this is reported as failed, not waited for forever. */
const GIVE_UP_MS = 120_000;

const BARE_SERVER = "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')";

interface Command {
  label: string;
  cmd: string;
  args: string[];
}

const NPM_START: Command = { label: '`npm start`', cmd: 'npm', args: ['start', '--silent'] };
const NODE_DIST: Command = { label: '`node dist/main.js`', cmd: process.execPath, args: ['dist/main.js'] };
const TSX_SRC: Command = { label: '`tsx src/main.ts` (former npm start)', cmd: process.execPath, args: ['--import', 'tsx', 'src/main.ts'] };
const BARE: Command = { label: 'bare node:http server (floor)', cmd: process.execPath, args: ['-e', BARE_SERVER] };

interface Start {
  healthzMs: number;
  readyzMs: number;
  /** CPU time (user + system) the started process group had used when it was ready; null off Linux */
  cpuMs: number | null;
}

/** Linux clock ticks per second for /proc/<pid>/stat times (USER_HZ, 100 on every usual kernel). */
const CLK_TCK = 100;

/**
 * CPU time used so far by the live processes of process group `pgid` (npm, its shell and node,
 * worker threads included), from /proc. Unlike wall time it barely depends on what else the
 * machine is running, so it is the figure to compare across runs on a shared machine.
 */
function groupCpuMs(pgid: number): number | null {
  let total = 0;
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // exited meanwhile
      }
      // pid (comm) state ppid pgrp … utime(14) stime(15): fields after the command name.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[2]) !== pgid) continue;
      total += Number(f[11]) + Number(f[12]);
    }
  } catch {
    return null;
  }
  return (total * 1000) / CLK_TCK;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Status of GET url, or null when nothing answers yet. */
function status(url: string): Promise<number | null> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** The bench's environment without anything that would change what a plain first start does. */
function startEnv(set: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...set };
  for (const k of ['DATABASE_URL', 'ADMIN_API_KEY', 'SECRET_KEY', 'SYSTEM_MODELS_FILE']) delete env[k];
  return env;
}

/** One cold start: spawn, poll /healthz and /readyz every 5 ms, then stop it (SIGTERM to its process group). */
async function coldStart(c: Command, dataDir: string, readyPath = '/readyz'): Promise<Start> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t0 = now();
  const child = spawn(c.cmd, c.args, {
    cwd: ROOT,
    env: startEnv({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  try {
    let healthzMs: number | null = null;
    for (;;) {
      if (gone) throw new Error(`${c.label} exited before it was ready: ${stderr.trim().slice(0, 500)}`);
      if (since(t0) > GIVE_UP_MS) throw new Error(`${c.label} was not ready within ${GIVE_UP_MS / 1000} s`);
      if (healthzMs === null && (await status(`${base}/healthz`)) === 200) healthzMs = since(t0);
      if (healthzMs !== null && (await status(`${base}${readyPath}`)) === 200) {
        const readyzMs = since(t0);
        return { healthzMs, readyzMs, cpuMs: child.pid === undefined ? null : groupCpuMs(child.pid) };
      }
      await sleep(5);
    }
  } finally {
    if (!gone && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    const killer = setTimeout(() => child.pid !== undefined && !gone && process.kill(-child.pid, 'SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  }
}

function row(c: Command, folder: string, starts: Start[], targetMs: number | null): Row {
  const ready = starts.map((s) => s.readyzMs);
  const r: Row = {
    command: c.label,
    'data folder': folder,
    runs: starts.length,
    'healthz p50 ms': round(median(starts.map((s) => s.healthzMs)), 0),
    'readyz p50 ms': round(median(ready), 0),
    'readyz min ms': round(Math.min(...ready), 0),
    'readyz max ms': round(Math.max(...ready), 0),
  };
  const cpu = starts.map((s) => s.cpuMs);
  if (cpu.every((c) => c !== null)) r['CPU to ready p50 ms'] = round(median(cpu as number[]), 0);
  if (targetMs !== null) r.target = verdict(round(median(ready), 0), '<=', targetMs);
  return r;
}

const tmp = (label: string) => mkdtempSync(path.join(tmpdir(), `atrium-bench-start-${label}-`));

/** RUNS starts on RUNS fresh empty folders (returned so they can serve as existing ones). */
async function onEmpty(c: Command, folders: string[]): Promise<Start[]> {
  const out: Start[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = tmp('empty');
    folders.push(dir);
    out.push(await coldStart(c, dir));
  }
  return out;
}

async function onExisting(c: Command, dir: string): Promise<Start[]> {
  const out: Start[] = [];
  for (let i = 0; i < RUNS; i++) out.push(await coldStart(c, dir));
  return out;
}

export async function benchStartup(): Promise<Section> {
  const sw = stopwatch();
  await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: ROOT });
  const folders: string[] = [];
  try {
    const npmEmpty = await onEmpty(NPM_START, folders);
    const existing = folders[0]!;
    const npmExisting = await onExisting(NPM_START, existing);
    const nodeEmpty = await onEmpty(NODE_DIST, folders);
    const nodeExisting = await onExisting(NODE_DIST, existing);
    const tsxEmpty = await onEmpty(TSX_SRC, folders);
    const tsxExisting = await onExisting(TSX_SRC, existing);
    folders.push(tmp('bare'));
    const bare = await onExisting(BARE, folders.at(-1)!);

    const rows: Row[] = [
      row(NPM_START, 'existing', npmExisting, TARGET_EXISTING_READY_MS),
      row(NPM_START, 'empty', npmEmpty, TARGET_EMPTY_READY_MS),
      row(NODE_DIST, 'existing', nodeExisting, null),
      row(NODE_DIST, 'empty', nodeEmpty, null),
      row(TSX_SRC, 'existing', tsxExisting, null),
      row(TSX_SRC, 'empty', tsxEmpty, null),
      { ...row(BARE, '—', bare, null), 'data folder': '—' },
    ];
    const existingP50 = round(median(npmExisting.map((s) => s.readyzMs)), 0);
    const emptyP50 = round(median(npmEmpty.map((s) => s.readyzMs)), 0);
    const targets: TargetRow[] = [
      {
        benchmark: 'Start-up, existing data folder',
        target: `\`npm start\` → /readyz ≤ ${TARGET_EXISTING_READY_MS} ms`,
        measured: `${existingP50} ms`,
        result: existingP50 <= TARGET_EXISTING_READY_MS ? 'pass' : 'MISS',
      },
      {
        benchmark: 'Start-up, empty data folder (embedded)',
        target: `\`npm start\` → /readyz ≤ ${TARGET_EMPTY_READY_MS} ms`,
        measured: `${emptyP50} ms`,
        result: emptyP50 <= TARGET_EMPTY_READY_MS ? 'pass' : 'MISS',
      },
    ];
    const npmCost = round(median(npmExisting.map((s) => s.healthzMs)) - median(nodeExisting.map((s) => s.healthzMs)), 0);
    const notes = [
      `npm's own start-up adds about ${npmCost} ms to every start (\`npm start\` vs \`node dist/main.js\`, /healthz p50, existing folder).`,
      'On an empty folder the embedded database starts from the seed made by the build (dist/db/seed: initdb + migrations done once at install), copied into DATA_DIR; from src/ (tsx) there is no seed and PGlite runs initdb.',
      'The machine is shared with whatever else runs during the bench; wall times grow with its load (compare with the bare server\'s row, the floor of spawning Node at that moment). "CPU to ready" (user + system time of the started process group, from /proc, at the first /readyz 200) depends far less on the load and is the figure to compare across runs.',
    ];
    return {
      name: 'Start-up',
      method: `Each command is spawned ${RUNS} times (cold process, fresh port, \`LOG_LEVEL=warn\`, no \`DATABASE_URL\`); /healthz and /readyz are polled every 5 ms from the moment of spawn; medians over the runs. "empty": a new empty DATA_DIR per run (the first start creates the embedded database, the instance admin and the secret key); "existing": the folder of an earlier start, restarted. The build is refreshed first. Targets: ready ≤ ${TARGET_EXISTING_READY_MS} ms on an existing folder, ≤ ${TARGET_EMPTY_READY_MS} ms on an empty one (the promise: under 3 s).`,
      tables: [{ title: 'Spawn → first 200 (milliseconds)', rows }],
      notes,
      targets,
      seconds: sw.elapsedMs() / 1000,
    };
  } finally {
    for (const f of folders) rmSync(f, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(renderSection(await benchStartup()));
}
