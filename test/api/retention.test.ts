/** Retention: the team's settings, pinned threads, the purge job (once across nodes racing) and its audit entry. */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, type paths } from '../helpers/api.js';
import { ADMIN_KEY, expectProblem, newTeam, startTestApp, testConfig, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { TeamSettings } from '../../src/modules/retention/schema.js';
import { RetentionService } from '../../src/modules/retention/service.js';
import { useStandIn } from '../support/use-standin.js';

let t: TestApp;
const stand = useStandIn({ reset: false });
const onPostgres = Boolean(process.env.ATRIUM_TEST_DATABASE_URL);

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

type Retention = paths['/api/v1/teams/{teamId}']['patch']['requestBody']['content']['application/json']['retention'];
const team$ = (teamId: string) => ({ params: { path: { teamId } } });
const getTeam = (key: string, teamId: string) => t.api(key).GET('/api/v1/teams/{teamId}', team$(teamId));
const setRetention = (key: string, teamId: string, retention: Retention) =>
  t.api(key).PATCH('/api/v1/teams/{teamId}', { ...team$(teamId), body: { retention } });
// raw: bodies the document rejects (out of range, wrong types, no retention)
const patchTeamRaw = (key: string, teamId: string, payload: object) => t.request({ method: 'PATCH', url: `/api/v1/teams/${teamId}`, key, payload });

describe('retention settings', () => {
  it('the team shows its retention; its owner changes it, null turns it off, a field left out stays', async () => {
    const team = await newTeam(t);
    const got = await getTeam(team.ownerKey, team.teamId);
    expect(expectShape(TeamSettings, got.data)).toMatchObject({ id: team.teamId, retention: { threadsDays: null, promptLogsDays: null } });
    const set = expectStatus(await setRetention(team.ownerKey, team.teamId, { threadsDays: 90, promptLogsDays: 30 }), 200);
    expect(set.retention).toEqual({ threadsDays: 90, promptLogsDays: 30 });
    const off = await setRetention(team.ownerKey, team.teamId, { threadsDays: null });
    expect(off.data?.retention).toEqual({ threadsDays: null, promptLogsDays: 30 });
    const member = await team.addUser('member');
    expect((await getTeam(member.key, team.teamId)).data?.retention).toEqual({
      threadsDays: null,
      promptLogsDays: 30,
    });
  });

  it('only the owner changes it; another team is 404 like a missing one; bad values are 400 and change nothing', async () => {
    const team = await newTeam(t);
    const other = await newTeam(t);
    const admin = await team.addUser('admin');
    const retention = { threadsDays: 7 };
    expectProblem(await setRetention(admin.key, team.teamId, retention), 403);
    for (const key of [other.ownerKey, ADMIN_KEY]) {
      expectProblem(await getTeam(key, team.teamId), 404);
      expectProblem(await setRetention(key, team.teamId, retention), 404);
    }
    expectProblem(await getTeam(team.ownerKey, '00000000-0000-4000-8000-000000000000'), 404);
    expectProblem(await getTeam(team.ownerKey, 'not-a-uuid'), 400);
    for (const bad of [{ threadsDays: 0 }, { threadsDays: -1 }, { promptLogsDays: 'x' }, { threadsDays: 1.5 }, { threadsDays: 40_000 }]) {
      expectProblem(await patchTeamRaw(team.ownerKey, team.teamId, { retention: bad }), 400);
    }
    expectProblem(await patchTeamRaw(team.ownerKey, team.teamId, {}), 400);
    expect((await getTeam(team.ownerKey, team.teamId)).data?.retention).toEqual({
      threadsDays: null,
      promptLogsDays: null,
    });
  });
});

/** A team whose workspace has `n` threads (one turn each, so one prompt log each). */
async function teamWithThreads(n: number, team?: TeamFixture) {
  team ??= await newTeam(t);
  const model = await createModel(t, team.ownerKey, { url: stand.standIn.openaiBaseUrl, contextWindow: 16000 });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
  const threads: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', {
      params: { path: { workspaceId: ws.id } },
      body: { prompt: `question ${i}` },
    });
    threads.push(expectStatus(res, 200).threadId);
  }
  return { team, ws, threads };
}

/** Make threads (and their prompt logs) look `days` old: the only way a test can have old data. */
async function age(threadIds: string[], days: number) {
  const db = t.database.db;
  for (const id of threadIds) {
    await db.execute(
      sql`update chat_threads set updated = now() - make_interval(days => ${days}), created = now() - make_interval(days => ${days}) where id = ${id}`,
    );
    await db.execute(sql`update prompt_logs set created = now() - make_interval(days => ${days}) where thread_id = ${id}`);
  }
}

const listThreads = async (team: TeamFixture, workspaceId: string) =>
  expectStatus(await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId } } }), 200);

type ThreadChange = paths['/api/v1/chat/{workspaceId}/history/{threadId}']['patch']['requestBody']['content']['application/json'];
const patchThread = (key: string, workspaceId: string, threadId: string, body: ThreadChange) =>
  t.api(key).PATCH('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId } }, body });

async function countLogs(teamId: string): Promise<number> {
  const res = (await t.database.db.execute(sql`select count(*)::int as n from prompt_logs where team_id = ${teamId}`)) as unknown as {
    rows: Array<{ n: number }>;
  };
  return res.rows[0]!.n;
}

async function purges(team: TeamFixture) {
  const res = await t.api(team.ownerKey).GET('/api/v1/audit', { params: { query: { action: 'retention.purge' } } });
  return expectStatus(res, 200).content;
}

describe('pinning', () => {
  it('who may change a thread pins it; the list shows it; pinning is not activity', async () => {
    const { team, ws, threads } = await teamWithThreads(1);
    const [id] = threads as [string];
    const before = expectStatus(
      await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.id, threadId: id } } }),
      200,
    );
    expect(before.pinned).toBe(false);
    const res = expectStatus(await patchThread(team.ownerKey, ws.id, id, { pinned: true }), 200);
    expect(res).toMatchObject({ id, pinned: true, updated: before.updated, title: before.title });
    expect((await listThreads(team, ws.id)).find((x) => x.id === id)?.pinned).toBe(true);
    const member = await team.addUser('member');
    expectProblem(await patchThread(member.key, ws.id, id, { pinned: false }), 403);
    const other = await newTeam(t);
    expectProblem(await patchThread(other.ownerKey, ws.id, id, { pinned: false }), 404);
    expectProblem(await patchThread(team.ownerKey, ws.id, id, {}), 400);
    // raw: a pinned that is not a boolean
    expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/chat/${ws.id}/history/${id}`, key: team.ownerKey, payload: { pinned: 'yes' } }), 400);
    const renamed = await patchThread(team.ownerKey, ws.id, id, { title: 'Kept' });
    expect(renamed.data).toMatchObject({ title: 'Kept', pinned: true });
  });
});

describe('the purge', () => {
  it('deletes unpinned threads and prompt logs older than the team says, keeps the rest, records one entry with counts', async () => {
    const { team, ws, threads } = await teamWithThreads(4);
    const [oldA, oldB, pinned, recent] = threads as [string, string, string, string];
    expectStatus(await patchThread(team.ownerKey, ws.id, pinned, { pinned: true }), 200);
    await age([oldA, oldB, pinned], 40);
    const untouched = await teamWithThreads(1);
    await age(untouched.threads, 400);
    expectStatus(await setRetention(team.ownerKey, team.teamId, { threadsDays: 30, promptLogsDays: 35 }), 200);

    await t.services.retention.purge();
    expect((await listThreads(team, ws.id)).map((x) => x.id).sort()).toEqual([pinned, recent].sort());
    // The pinned thread's log is a prompt log like any other: it goes when the logs' retention says so.
    expect(await countLogs(team.teamId)).toBe(1);
    expect(await listThreads(untouched.team, untouched.ws.id)).toHaveLength(1);
    expect(await countLogs(untouched.team.teamId)).toBe(1);
    const entries = await purges(team);
    expect(entries).toEqual([
      expect.objectContaining({
        actor: expect.objectContaining({ userId: null }),
        details: { threads: 2, promptLogs: 3, threadsDays: 30, promptLogsDays: 35 },
      }),
    ]);
    // Nothing more to delete: no second entry.
    await t.services.retention.purge();
    expect(await purges(team)).toHaveLength(1);
  });

  it('runs once when nodes race: every team purged exactly once, one entry each', async () => {
    const teams = await Promise.all([teamWithThreads(3), teamWithThreads(2), teamWithThreads(2)]);
    for (const x of teams) {
      await age(x.threads, 10);
      expectStatus(await setRetention(x.team.ownerKey, x.team.teamId, { threadsDays: 5, promptLogsDays: 5 }), 200);
    }
    // A second node: another app on the same PostgreSQL database; on the embedded database (one process by construction), a second service over it.
    const second = onPostgres ? await startTestApp() : null;
    try {
      const nodes = [t.services.retention, second ? second.services.retention : new RetentionService(t.database.db), new RetentionService(t.database.db)];
      const results = (await Promise.all(nodes.map((n) => n.purge()))).flat();
      for (const x of teams) {
        const mine = results.filter((r) => r.teamId === x.team.teamId);
        // Another test file's node may have purged it first (its start-up run); then no node here did.
        expect(mine.length).toBeLessThanOrEqual(1);
        expect(await listThreads(x.team, x.ws.id)).toEqual([]);
        expect(await countLogs(x.team.teamId)).toBe(0);
        const entries = await purges(x.team);
        expect(entries).toHaveLength(1);
        expect(entries[0]!.details).toMatchObject({ threads: x.threads.length, promptLogs: x.threads.length });
      }
    } finally {
      await second?.close();
    }
  });

  it('`npm run cli -- retention` runs the job once now', async () => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'atrium-retention-cli-')),
      SECRET_KEY: 'test-secret-key-0123456789',
      ADMIN_API_KEY: ADMIN_KEY,
    };
    const url = testConfig().databaseUrl;
    if (onPostgres && url) env.DATABASE_URL = url;
    const x = onPostgres ? await teamWithThreads(1) : null;
    if (x) {
      await age(x.threads, 3);
      expectStatus(await setRetention(x.team.ownerKey, x.team.teamId, { threadsDays: 1 }), 200);
    }
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'retention'], {
      cwd: path.join(import.meta.dirname, '..', '..'),
      env,
    });
    const out = JSON.parse(stdout) as { purged: Array<{ teamId: string; threads: number; promptLogs: number }> };
    expect(Array.isArray(out.purged)).toBe(true);
    if (x) {
      expect(await listThreads(x.team, x.ws.id)).toEqual([]);
      expect((await purges(x.team))[0]?.details).toMatchObject({ threads: 1, promptLogs: 0 });
    }
  }, 120_000);
});
