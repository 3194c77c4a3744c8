import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/client.js';
import { testConfig } from './helpers/app.js';
import { startStandInProvider } from './support/standin-provider.js';

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

/** The environment of a server process on this run's database: a fresh DATA_DIR, or the PostgreSQL run's URL and keys. */
function serverEnv(): Record<string, string> {
  const base = testConfig();
  return {
    PORT: String(20000 + Math.floor(Math.random() * 20000)),
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'atrium-srv-')),
    LOG_LEVEL: 'warn',
    ...(base.databaseUrl !== 'memory://' && base.databaseUrl
      ? { DATABASE_URL: base.databaseUrl, ADMIN_API_KEY: 'atr_test_instance_admin_key_0123456789', SECRET_KEY: 'test-secret-key-0123456789' }
      : {}),
  };
}

describe('the server process', () => {
  it('serves the API, shuts down cleanly on SIGTERM, and keeps what it acknowledged', async () => {
    const env = serverEnv();
    const url = `http://127.0.0.1:${env.PORT}`;
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

  it('loses no answered turn when it is killed (SIGKILL) in the middle of a burst', async () => {
    const started = new Date().toISOString();
    const standIn = await startStandInProvider();
    standIn.set({ delayMs: 2 });
    try {
      const env = serverEnv();
      const url = `http://127.0.0.1:${env.PORT}`;
      const first = startServer(env);
      await until(`${url}/readyz`, 200);
      const key = env.ADMIN_API_KEY ?? /atr_[A-Za-z0-9_-]{40,}/.exec(first.output())?.[0];
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const post = async (route: string, body: unknown) => fetch(`${url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const model = (await (
        await post('/api/v1/models', {
          name: 'burst',
          apiBase: 'OPENAI',
          url: standIn.openaiBaseUrl,
          baseModel: 'gpt-test',
          contextWindow: 8192,
          apiKey: 'sk-burst-0123456789',
        })
      ).json()) as { id: string };
      const ws = (await (await post('/api/v1/workspaces', { name: 'burst', modelIds: [model.id] })).json()) as { id: string };

      // Eight clients, each opening a thread, answering in it, and calling /v1 in turn, until the kill.
      // A turn counts as answered once its whole 200 body has arrived.
      const answered: Array<{ prompt: string; answer: string; threadId: string | null }> = [];
      let killed = false;
      const lane = async (n: number) => {
        let threadId: string | null = null;
        for (let i = 0; !killed; i++) {
          const prompt = `burst ${n}.${i} ${randomUUID()}`;
          try {
            if (i % 3 === 2) {
              const r = await post('/v1/chat/completions', { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: prompt }] });
              const body = (await r.json()) as { choices: Array<{ message: { content: string } }> };
              if (r.status === 200) answered.push({ prompt, answer: body.choices[0]!.message.content, threadId: null });
            } else {
              const r = await post(`/api/v1/chat/${ws.id}/completions`, { prompt, ...(i % 3 === 1 && threadId ? { threadId } : {}) });
              const body = (await r.json()) as { threadId: string; message: { content: string } };
              if (r.status === 200) answered.push({ prompt, answer: body.message.content, threadId: (threadId = body.threadId) });
            }
          } catch {
            return; // the server is gone
          }
        }
      };
      const lanes = Array.from({ length: 8 }, (_, n) => lane(n));
      while (answered.length < 60) await new Promise((res) => setTimeout(res, 5));
      first.child.kill('SIGKILL');
      killed = true;
      await Promise.all(lanes);
      await first.exited;

      const second = startServer(env);
      await until(`${url}/readyz`, 200);
      const get = async <T>(route: string) => (await (await fetch(`${url}${route}`, { headers })).json()) as T;
      const logs = await get<{ content: Array<{ prompt: string; response: string | null; status: string }> }>(
        `/api/v1/chat/prompt-logs/paged?size=1000&startDate=${encodeURIComponent(started)}`,
      );
      const threads = new Map<string, Array<{ role: string; content: string }>>();
      for (const a of answered) {
        expect(logs.content.find((l) => l.prompt === a.prompt)).toMatchObject({ status: 'ok', response: a.answer });
        if (!a.threadId) continue;
        if (!threads.has(a.threadId))
          threads.set(a.threadId, (await get<{ messages: Array<{ role: string; content: string }> }>(`/api/v1/chat/${ws.id}/history/${a.threadId}`)).messages);
        const messages = threads.get(a.threadId)!;
        expect(messages).toContainEqual(expect.objectContaining({ role: 'user', content: a.prompt }));
        expect(messages).toContainEqual(expect.objectContaining({ role: 'assistant', content: a.answer }));
      }
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      await standIn.close();
    }
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
