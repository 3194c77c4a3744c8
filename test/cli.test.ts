import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, startTestApp, testConfig, type TestApp } from './helpers/app.js';

const run = promisify(execFile);
const ROOT = path.join(import.meta.dirname, '..');

describe('CLI', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atrium-cli-'));
  const base = testConfig();
  // On PostgreSQL the CLI and the app share the suite's database; on PGlite, a folder on disk.
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    SECRET_KEY: 'test-secret-key-0123456789',
    ADMIN_API_KEY: 'atr_test_instance_admin_key_0123456789',
    ...(base.databaseUrl && base.databaseUrl !== 'memory://' ? { DATABASE_URL: base.databaseUrl } : {}),
  };
  const cli = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env });
    return JSON.parse(stdout);
  };
  let t: TestApp;
  let created: { team: { id: string }; owner: { id: number }; apiKey: string };
  let member: { user: { id: number }; apiKey: string };
  let key: { key: string };
  let listed: Array<Record<string, unknown>>;

  beforeAll(async () => {
    created = await cli('teams', 'create', '--name', 'CLI team', '--owner-name', 'Olga', '--owner-email', `olga-${Date.now()}@example.com`);
    member = await cli('users', 'create', '--team', created.team.id, '--name', 'Max', '--email', `max-${Date.now()}@example.com`, '--role', 'member');
    key = await cli('keys', 'create', '--user', String(member.user.id), '--name', 'laptop');
    listed = await cli('teams', 'list');
    t = await startTestApp({ dataDir, databaseUrl: base.databaseUrl === 'memory://' ? null : base.databaseUrl });
    // Five cold starts (the first initialises the embedded database): generous for a loaded machine.
  }, 300_000);
  afterAll(() => t?.close());

  it('creates teams, users and keys that work over the API', async () => {
    const me = await t.request({ method: 'GET', url: '/api/v1/me', key: created.apiKey });
    expect(me.json()).toMatchObject({ user: { role: 'owner', name: 'Olga' }, team: { id: created.team.id, name: 'CLI team' } });
    const asMember = await t.request({ method: 'GET', url: '/api/v1/me', key: key.key });
    expect(asMember.json().user).toMatchObject({ id: member.user.id, role: 'member' });
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/users', key: key.key }), 403);
    // the list says what a person knows a team by, nothing internal
    const mine = listed.find((x) => x.id === created.team.id);
    expect(mine).toEqual({ id: created.team.id, name: 'CLI team', created: expect.any(String) });
  });

  it('fails clearly on a bad command', async () => {
    await expect(
      run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'users', 'create', '--team', created.team.id], { cwd: ROOT, env }),
    ).rejects.toMatchObject({
      stderr: expect.stringContaining('--name is required'),
    });
  }, 120_000);
});
