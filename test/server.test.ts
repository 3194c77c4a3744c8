import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testConfig } from './helpers/app.js';

const ROOT = path.join(import.meta.dirname, '..');

function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}

async function until(url: string, status: number, ms = 30_000): Promise<void> {
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
      ...(base.databaseUrl !== 'memory://' && base.databaseUrl ? { DATABASE_URL: base.databaseUrl, ADMIN_API_KEY: 'atr_test_instance_admin_key_0123456789', SECRET_KEY: 'test-secret-key-0123456789' } : {}),
    };
    const url = `http://127.0.0.1:${port}`;
    const first = startServer(env);
    await until(`${url}/healthz`, 200);
    await until(`${url}/readyz`, 200);
    const key = env.ADMIN_API_KEY ?? /atr_[A-Za-z0-9_-]{40,}/.exec(first.output())?.[0];
    expect(key).toBeTruthy();
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
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  }, 60_000);
});
