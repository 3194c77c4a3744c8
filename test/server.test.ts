import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/client.js';
import { testConfig } from './helpers/app.js';

const ROOT = path.join(import.meta.dirname, '..');
const TSX = ['--import', 'tsx', 'src/main.ts'];

const children = new Set<ChildProcess>();
// A failed assertion must not leave a server running (and holding its port and database).
afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
});

/** Start the server as a process: from source through tsx (default), or `node <build>/main.js` as npm start does. */
function startServer(env: Record<string, string>, args: string[] = TSX) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}

async function until(url: string, status: number, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await fetch(url).catch(() => null);
    if (r?.status === status) return;
    if (Date.now() > end) throw new Error(`${url} never answered ${status}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

describe('the server process', () => {
  it('serves the API, shuts down cleanly on SIGTERM, and keeps what it acknowledged', async () => {
    const port = String(20000 + Math.floor(Math.random() * 20000));
    const base = testConfig();
    const env: Record<string, string> = {
      PORT: port,
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'atrium-srv-')),
      LOG_LEVEL: 'warn',
      ...(base.databaseUrl !== 'memory://' && base.databaseUrl
        ? { DATABASE_URL: base.databaseUrl, ADMIN_API_KEY: 'atr_test_instance_admin_key_0123456789', SECRET_KEY: 'test-secret-key-0123456789' }
        : {}),
    };
    const url = `http://127.0.0.1:${port}`;
    const first = startServer(env);
    await until(`${url}/healthz`, 200);
    await until(`${url}/readyz`, 200);
    const key = env.ADMIN_API_KEY ?? /atr_[A-Za-z0-9_-]{40,}/.exec(first.output())?.[0];
    expect(key).toBeTruthy();
    // On an empty database without ADMIN_PASSWORD, the admin's invite link is printed beside the key.
    if (!env.DATABASE_URL) expect(first.output()).toContain(`${url}/invite#token=`);
    const ws = await fetch(`${url}/api/v1/workspaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'survives restarts' }),
    });
    expect(ws.status).toBe(200);
    const { id } = (await ws.json()) as { id: string };
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = startServer(env);
    await until(`${url}/readyz`, 200);
    const again = await fetch(`${url}/api/v1/workspaces/${id}`, { headers: { authorization: `Bearer ${key}` } });
    expect(again.status).toBe(200);
    expect(second.output()).not.toContain('Admin API key');
    expect(second.output()).not.toContain('/invite#token=');
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  }, 300_000);
});

describe('the compiled build (what npm start runs)', () => {
  // Inside node_modules so the build resolves the project's packages like dist/ does.
  const cache = path.join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const out = mkdtempSync(path.join(cache, 'atrium-build-test-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('starts from the seeded embedded database on an empty folder, then resumes it', async () => {
    await promisify(execFile)(process.execPath, ['scripts/build.mjs', '--out-dir', out], { cwd: ROOT });
    expect(existsSync(path.join(out, 'main.js'))).toBe(true);
    expect(existsSync(path.join(out, 'db', 'migrations', 'meta', '_journal.json'))).toBe(true);
    expect(existsSync(path.join(out, 'db', 'seed', 'pglite', 'PG_VERSION'))).toBe(true);

    // Two empty folders opened by the compiled client are copies of one seed (same system
    // identifier, which initdb makes unique), already migrated.
    const client = (await import(pathToFileURL(path.join(out, 'db', 'client.js')).href)) as {
      openDatabase(o: { databaseUrl: null; dataDir: string }): Promise<Database>;
    };
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-seed-'));
      const database = await client.openDatabase({ databaseUrl: null, dataDir });
      const rows = (await database.db.execute('select system_identifier::text as id from pg_control_system()')) as unknown as { rows: Array<{ id: string }> };
      ids.push(rows.rows[0]!.id);
      await database.close();
      expect(readdirSync(dataDir)).toEqual(['pglite']);
    }
    expect(ids[0]).toBe(ids[1]);

    const port = String(20000 + Math.floor(Math.random() * 20000));
    const env = { PORT: port, DATA_DIR: mkdtempSync(path.join(tmpdir(), 'atrium-srv-')), LOG_LEVEL: 'warn' };
    const url = `http://127.0.0.1:${port}`;
    const first = startServer(env, [path.join(out, 'main.js')]);
    await until(`${url}/readyz`, 200);
    const key = /atr_[A-Za-z0-9_-]{40,}/.exec(first.output())?.[0];
    expect(key).toBeTruthy();
    const ws = await fetch(`${url}/api/v1/workspaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'compiled' }),
    });
    expect(ws.status).toBe(200);
    const { id } = (await ws.json()) as { id: string };
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = startServer(env, [path.join(out, 'main.js')]);
    await until(`${url}/readyz`, 200);
    expect((await fetch(`${url}/api/v1/workspaces/${id}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect(second.output()).not.toContain('Admin API key');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 300_000);
});
