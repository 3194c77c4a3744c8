import { sql } from 'drizzle-orm';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageOf } from '../../src/http/paging.js';
import { execute } from '../../src/db/driver.js';
import { PromptLog } from '../../src/modules/prompt-logs/schema.js';
import { expectStatus } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';

let t: TestApp;
const stand = useStandIn({ reset: false });
beforeAll(async () => {
  t = await startTestApp({ promptLogMaxRows: 5 });
});
afterAll(async () => {
  await t.close();
});

const range = { startDate: '2000-01-01T00:00:00Z', endDate: '2100-01-01T00:00:00Z' };
const logs = (key: string, query: { startDate: string; endDate: string; q?: string } = range) =>
  t.api(key).GET('/api/v1/chat/prompt-logs', { params: { query } });
const paged = (key: string, query: { q?: string; page?: number; size?: number; sort?: string[] }) =>
  t.api(key).GET('/api/v1/chat/prompt-logs/paged', { params: { query } });

async function teamWithLogs(prompts: string[]) {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { url: stand.standIn.openaiBaseUrl, name: 'Logger' });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id] });
  const member = await team.addUser('member');
  for (const [i, prompt] of prompts.entries()) {
    const key = i % 2 === 0 ? team.ownerKey : member.key;
    expectStatus(await t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.id } }, body: { prompt } }), 200);
  }
  return { team, member, ws, model: m };
}

describe('prompt logs', () => {
  it('lists a date range newest first with every column; owners see the team, members their own', async () => {
    const { team, member, ws, model } = await teamWithLogs(['alpha question', 'beta question', 'gamma question']);
    const all = await logs(team.ownerKey);
    expect(all.response.status).toBe(200);
    const rows = expectShape(Type.Array(PromptLog), all.data);
    expect(rows.map((r) => r.prompt)).toEqual(['gamma question', 'beta question', 'alpha question']);
    expect(rows[0]).toMatchObject({ workspaceId: ws.id, modelId: model.id, modelName: 'Logger', response: 'Echo: gamma question', status: 'ok', error: null });
    expect(rows[0]!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(rows[0]!.promptTokens).toBeGreaterThan(0);
    const mine = (await logs(member.key)).data;
    expect(mine?.map((r) => r.prompt)).toEqual(['beta question']);
    // another team sees none of them
    const other = await newTeam(t);
    expect((await logs(other.ownerKey)).data).toEqual([]);
  });

  it('requires both dates, a valid range and a bounded size', async () => {
    const { team } = await teamWithLogs(['one', 'two', 'three', 'four', 'five', 'six']);
    // raw: the required dates left out
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs', key: team.ownerKey }), 400);
    // raw: the end date left out
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs?startDate=${range.startDate}`, key: team.ownerKey }), 400);
    expectProblem(await logs(team.ownerKey, { startDate: 'yesterday', endDate: 'today' }), 400);
    expectProblem(await logs(team.ownerKey, { startDate: range.endDate, endDate: range.startDate }), 400);
    const tooMany = expectProblem(await logs(team.ownerKey), 400);
    expect(tooMany.code).toBe('too_many_rows');
    expect(tooMany.detail).toContain('/paged');
    // raw: the end date left out
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs/csv?startDate=${range.startDate}`, key: team.ownerKey }), 400);
  });

  it('searches prompt and response text with q', async () => {
    const { team } = await teamWithLogs(['how do volcanoes erupt', 'best pasta recipe']);
    const hit = (await logs(team.ownerKey, { ...range, q: 'volcanoes' })).data;
    expect(hit?.map((r) => r.prompt)).toEqual(['how do volcanoes erupt']);
    const inResponse = (await paged(team.ownerKey, { q: 'echo pasta' })).data;
    expect(inResponse?.content.map((r) => r.prompt)).toEqual(['best pasta recipe']);
  });

  it('pages with Spring-style fields and whitelisted sorting', async () => {
    const { team } = await teamWithLogs(['p0', 'p1', 'p2', 'p3', 'p4']);
    const page = expectShape(PageOf(PromptLog), (await paged(team.ownerKey, { page: 1, size: 2, sort: ['created,asc'] })).data);
    expect(page).toMatchObject({ totalElements: 5, totalPages: 3, number: 1, size: 2, numberOfElements: 2, first: false, last: false, empty: false });
    expect(page.content.map((r) => r.prompt)).toEqual(['p2', 'p3']);
    const last = (await paged(team.ownerKey, { page: 2, size: 2, sort: ['created,asc'] })).data;
    expect(last).toMatchObject({ last: true, numberOfElements: 1 });
    const beyond = (await paged(team.ownerKey, { page: 9, size: 2 })).data;
    expect(beyond).toMatchObject({ empty: true, content: [] });
    expectProblem(await paged(team.ownerKey, { sort: ['prompt,asc'] }), 400);
    expectProblem(await paged(team.ownerKey, { sort: ['created;drop table'] }), 400);
    expectProblem(await paged(team.ownerKey, { size: 1001 }), 400);
    expectProblem(await paged(team.ownerKey, { page: -1 }), 400);
  });

  it('exports CSV with a header, RFC 4180 quoting and formula-safe cells', async () => {
    const { team } = await teamWithLogs(['=HYPERLINK("http://evil")', 'plain, with "quotes"\nand a newline', '@SUM(A1)']);
    const { data, response } = await t.api(team.ownerKey).GET('/api/v1/chat/prompt-logs/csv', { params: { query: range }, parseAs: 'text' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/csv');
    const body = data ?? '';
    const lines = body.split('\r\n');
    expect(lines[0]).toBe('id,created,userId,workspaceId,threadId,modelId,modelName,prompt,response,promptTokens,completionTokens,latencyMs,status,error');
    expect(body).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(body).toContain(`'@SUM(A1)`);
    expect(body).toContain('"plain, with ""quotes""\nand a newline"');
    expect(body).not.toMatch(/,=HYPERLINK/);
  });

  it('exports every log once, in order, across many reads, logs of one instant included', async () => {
    const team = await newTeam(t);
    const me = expectStatus(await t.api(team.ownerKey).GET('/api/v1/me'), 200);
    // 350 logs over several of the export's reads; groups of seven share one instant, to the microsecond, so reads end inside a group
    await execute(
      t.database.db,
      sql`insert into prompt_logs (id, team_id, user_id, model_name, prompt, status, created)
          select gen_random_uuid(), ${team.teamId}::uuid, ${me.user.id}::int, 'm', 'log ' || g, 'ok',
                 timestamptz '2020-06-01 12:00:00.123456+00' + ((g / 7) || ' milliseconds')::interval
          from generate_series(1, 350) g`,
    );
    const { data } = await t.api(team.ownerKey).GET('/api/v1/chat/prompt-logs/csv', { params: { query: range }, parseAs: 'text' });
    const rows = (data ?? '').split('\r\n').filter(Boolean).slice(1);
    const ids = rows.map((r) => r.split(',')[0]!);
    expect(rows).toHaveLength(350);
    expect(new Set(ids).size).toBe(350);
    const { rows: stored } = await execute<{ id: string }>(
      t.database.db,
      sql`select id from prompt_logs where team_id = ${team.teamId}::uuid order by created, id`,
    );
    expect(ids).toEqual(stored.map((r) => r.id));
  });

  it('keeps logs when their thread is deleted', async () => {
    const { team, ws } = await teamWithLogs(['keep me']);
    const api = t.api(team.ownerKey);
    const threads = expectStatus(await api.GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId: ws.id } } }), 200);
    await api.DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.id, threadId: threads[0]!.id } } });
    const rows = (await logs(team.ownerKey)).data;
    expect(rows).toHaveLength(1);
    expect(rows?.[0]).toMatchObject({ prompt: 'keep me', threadId: threads[0]!.id });
  });
});
