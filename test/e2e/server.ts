/**
 * A real Atrium server for browser tests and page benchmarks: `src/main.ts` in its own process
 * (through tsx) on a fresh embedded database in a temporary DATA_DIR, with the instance admin's
 * password and API key set (or, with `{ adminPassword: false }`, the key only, as a first start
 * that prints the admin's invite link), serving the web app built into dist/web. The stand-in provider runs in
 * the calling process, so tests flip its switches directly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const ADMIN_EMAIL = 'admin@example.test';
export const ADMIN_PASSWORD = 'correct horse battery staple';
const ADMIN_API_KEY = 'atr_e2e_admin_key_0123456789abcdef';

export interface AtriumServer {
  url: string;
  standIn: StandInProvider;
  /** what the server has printed so far (stdout and stderr) */
  output(): string;
  /** A JSON call to the API with the admin's key (setup that the test is not about). */
  api<T = unknown>(method: string, route: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}):\n${output()}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server did not become ready:\n${output()}`);
}

/** `port`: listen there (a test that must know the URL before the server starts); `env`: more of the server's environment. */
export async function startAtrium(opts: { adminPassword?: boolean; port?: number; env?: Record<string, string> } = {}): Promise<AtriumServer> {
  if (!existsSync(path.join(ROOT, 'dist/web/index.html'))) throw new Error('dist/web is missing: run `npm run build` (or `npm run build:web`) first');
  const standIn = await startStandInProvider();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-e2e-'));
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  let log = '';
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_EMAIL,
      ...(opts.adminPassword === false ? {} : { ADMIN_PASSWORD }),
      ADMIN_API_KEY,
      SECRET_KEY: 'e2e-secret-key-0123456789abcdef',
      LOG_LEVEL: 'warn',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  await waitReady(url, child, () => log);

  const api = async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const res = await fetch(url + route, {
      method,
      headers: { authorization: `Bearer ${ADMIN_API_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };

  return {
    url,
    standIn,
    output: () => log,
    api,
    async close() {
      child.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          resolve();
        }, 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
      });
      await standIn.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A team model answering through the stand-in's OpenAI-compatible endpoint. */
export async function createStandInModel(server: AtriumServer, name: string): Promise<{ id: string; name: string }> {
  return server.api('POST', '/api/v1/models', {
    name,
    apiBase: 'OPENAI',
    connectionType: 'URL',
    url: server.standIn.openaiBaseUrl,
    baseModel: 'gpt-test',
    apiKey: 'sk-test-openai',
    contextWindow: 8192,
  });
}
