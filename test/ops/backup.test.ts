import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { count } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { chatMessages, chatThreads } from '../../src/db/schema.js';
import { expectStatus } from '../helpers/api.js';
import { newTeam, startTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { useStandIn } from '../support/use-standin.js';

/**
 * `npm run cli -- backup` / `restore` on the embedded database: a backup taken through the running
 * server's admin socket while chat turns are written, restored into an empty DATA_DIR, answers
 * with the same data on a server started there (its secret key file included: the model's sealed
 * API key still opens). The real CLI runs as a child process.
 */
const exec = promisify(execFile);
const ROOT = path.join(import.meta.dirname, '..', '..');
const onPostgres = testConfig().databaseUrl !== 'memory://' && testConfig().databaseUrl !== null;

async function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['DATABASE_URL', 'SECRET_KEY', 'ADMIN_API_KEY'].includes(k)));
  try {
    const r = await exec(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env: { ...clean, ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const tmp = (name: string) => mkdtempSync(path.join(tmpdir(), `atrium-${name}-`));

async function rows(t: TestApp): Promise<{ threads: number; messages: number }> {
  const [th] = await t.database.db.select({ n: count() }).from(chatThreads);
  const [me] = await t.database.db.select({ n: count() }).from(chatMessages);
  return { threads: Number(th!.n), messages: Number(me!.n) };
}

describe.skipIf(onPostgres)('backup and restore of the embedded database', () => {
  const s = useStandIn();
  const dataDir = tmp('backup-src');
  const embedded = { databaseUrl: null, embeddedDbThread: true, secretKey: null };

  it('backs up while turns are written; the restored server answers with the same data; a non-empty DATA_DIR is refused', async () => {
    let t: TestApp | null = await startTestApp({ ...embedded, dataDir });
    const backupFile = path.join(tmp('backup-file'), 'atrium.backup');
    let restored: TestApp | null = null;
    try {
      const team = await newTeam(t);
      const model = await createModel(t, team.ownerKey, { url: s.standIn.openaiBaseUrl, apiKey: 'sk-stand-in-key-0123' });
      const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
      const workspaceId = ws.id;
      const turn = (app: TestApp, prompt: string, threadId?: string) =>
        app.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', {
          params: { path: { workspaceId } },
          body: { prompt, ...(threadId ? { threadId } : {}) },
        });
      const threadId = expectStatus(await turn(t, 'the first question'), 200).threadId;
      expectStatus(await turn(t, 'a follow-up', threadId), 200);
      const history = async (app: TestApp) =>
        expectStatus(await app.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId } } }), 200);
      const original = await history(t);

      // Writes go on while the backup is taken: new threads, one turn after another.
      const before = await rows(t);
      let writing = true;
      let written = 0;
      const app = t;
      const writer = (async () => {
        while (writing) {
          expectStatus(await turn(app, `concurrent ${written}`), 200);
          written++;
        }
      })();
      const taken = await cli({ DATA_DIR: dataDir }, 'backup', backupFile);
      writing = false;
      await writer;
      expect(taken.stderr).toBe('');
      expect(taken.code).toBe(0);
      expect(taken.stdout).toContain('from the running server');
      const after = await rows(t);
      expect(written).toBeGreaterThan(0);

      // Restoring over the running server's folder (not empty) is refused, and changes nothing.
      const over = await cli({ DATA_DIR: dataDir }, 'restore', backupFile);
      expect(over.code).toBe(1);
      expect(over.stderr).toMatch(/a server is running|is not empty/);
      expect(await rows(t)).toEqual(after);
      await t.close();
      t = null;

      const target = path.join(tmp('restore'), 'data');
      const done = await cli({ DATA_DIR: target }, 'restore', backupFile);
      expect(done.stderr).toBe('');
      expect(done.code).toBe(0);
      restored = await startTestApp({ ...embedded, dataDir: target });
      // The thread from before the backup, message for message.
      expect(await history(restored)).toEqual(original);
      // A state between the two counts: what was there when the backup started, and no more than at the end.
      const got = await rows(restored);
      expect(got.threads).toBeGreaterThanOrEqual(before.threads);
      expect(got.threads).toBeLessThanOrEqual(after.threads);
      expect(got.messages).toBeGreaterThanOrEqual(before.messages);
      expect(got.messages).toBeLessThanOrEqual(after.messages);
      // The model's sealed API key opens with the restored secret key file: a turn works.
      expectStatus(await turn(restored, 'after the restore', threadId), 200);
    } finally {
      await t?.close();
      await restored?.close();
    }
  }, 300_000);

  it('with no server running, backs up from the folder itself; the copy restores exactly', async () => {
    const file = path.join(tmp('offline'), 'offline.backup');
    const taken = await cli({ DATA_DIR: dataDir }, 'backup', file);
    expect(taken.stderr).toBe('');
    expect(taken.stdout).toContain('no server was running');
    const source = await startTestApp({ ...embedded, dataDir });
    const expected = await rows(source);
    await source.close();
    const target = tmp('offline-restore');
    expect((await cli({ DATA_DIR: target }, 'restore', file)).code).toBe(0);
    const restored = await startTestApp({ ...embedded, dataDir: target });
    try {
      expect(await rows(restored)).toEqual(expected);
    } finally {
      await restored.close();
    }
  }, 300_000);

  it('refuses a file that is not a backup, and an empty database folder to back up', async () => {
    const junk = path.join(tmp('junk'), 'junk.backup');
    writeFileSync(junk, 'not a tar file at all'.repeat(40));
    const r = await cli({ DATA_DIR: path.join(tmp('junk-target'), 'data') }, 'restore', junk);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not an Atrium backup|truncated/);
    const none = await cli({ DATA_DIR: tmp('empty') }, 'backup', path.join(tmp('none'), 'x.backup'));
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('holds no embedded database');
  }, 120_000);
});

describe('backup with DATABASE_URL', () => {
  it('points to pg_dump / pg_restore instead of copying anything', async () => {
    const env = { DATA_DIR: tmp('pg'), DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
    for (const command of ['backup', 'restore']) {
      const r = await cli(env, command, path.join(tmp('pgfile'), 'x.backup'));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('pg_dump');
    }
  }, 120_000);
});
