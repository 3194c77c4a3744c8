import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageOf } from '../../src/http/paging.js';
import { PromptLog } from '../../src/modules/prompt-logs/schema.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';

let t: TestApp;
let standIn: StandInProvider;
beforeAll(async () => {
  standIn = await startStandInProvider();
  t = await startTestApp({ promptLogMaxRows: 5 });
});
afterAll(async () => {
  await t.close();
  await standIn.close();
});

const range = { startDate: '2000-01-01T00:00:00Z', endDate: '2100-01-01T00:00:00Z' };
const qs = (o: Record<string, string | number>) => new URLSearchParams(Object.entries(o).map(([k, v]): [string, string] => [k, String(v)])).toString();

async function teamWithLogs(prompts: string[]) {
  const team = await newTeam(t);
  const m = await createModel(t, team.ownerKey, { url: standIn.openaiBaseUrl, name: 'Logger' });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [m.id] });
  const member = await team.addUser('member');
  for (const [i, prompt] of prompts.entries()) {
    const key = i % 2 === 0 ? team.ownerKey : member.key;
    const r = await t.request({ method: 'POST', url: `/api/v1/chat/${ws.id}/completions`, key, payload: { prompt } });
    if (r.statusCode !== 200) throw new Error(r.body);
  }
  return { team, member, ws, model: m };
}

describe('prompt logs', () => {
  it('lists a date range newest first with every column; owners see the team, members their own', async () => {
    const { team, member, ws, model } = await teamWithLogs(['alpha question', 'beta question', 'gamma question']);
    const all = await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs?${qs(range)}`, key: team.ownerKey });
    expect(all.statusCode).toBe(200);
    const rows = expectShape(Type.Array(PromptLog), all.json());
    expect(rows.map((r) => r.prompt)).toEqual(['gamma question', 'beta question', 'alpha question']);
    expect(rows[0]).toMatchObject({ workspaceId: ws.id, modelId: model.id, modelName: 'Logger', response: 'Echo: gamma question', status: 'ok', error: null });
    expect(rows[0]!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(rows[0]!.promptTokens).toBeGreaterThan(0);
    const mine = (await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs?${qs(range)}`, key: member.key })).json();
    expect(mine.map((r: { prompt: string }) => r.prompt)).toEqual(['beta question']);
    // another team sees none of them
    const other = await newTeam(t);
    expect((await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs?${qs(range)}`, key: other.ownerKey })).json()).toEqual([]);
  });

  it('requires both dates, a valid range and a bounded size', async () => {
    const { team } = await teamWithLogs(['one', 'two', 'three', 'four', 'five', 'six']);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs', key: team.ownerKey }), 400);
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs?startDate=${range.startDate}`, key: team.ownerKey }), 400);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs?startDate=yesterday&endDate=today', key: team.ownerKey }), 400);
    expectProblem(
      await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs?${qs({ startDate: range.endDate, endDate: range.startDate })}`, key: team.ownerKey }),
      400,
    );
    const tooMany = expectProblem(await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs?${qs(range)}`, key: team.ownerKey }), 400);
    expect(tooMany.code).toBe('too_many_rows');
    expect(tooMany.detail).toContain('/paged');
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs/csv?startDate=${range.startDate}`, key: team.ownerKey }), 400);
  });

  it('searches prompt and response text with q', async () => {
    const { team } = await teamWithLogs(['how do volcanoes erupt', 'best pasta recipe']);
    const hit = (await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs?${qs({ ...range, q: 'volcanoes' })}`, key: team.ownerKey })).json();
    expect(hit.map((r: { prompt: string }) => r.prompt)).toEqual(['how do volcanoes erupt']);
    const inResponse = (await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs/paged?${qs({ q: 'echo pasta' })}`, key: team.ownerKey })).json();
    expect(inResponse.content.map((r: { prompt: string }) => r.prompt)).toEqual(['best pasta recipe']);
  });

  it('pages with Spring-style fields and whitelisted sorting', async () => {
    const { team } = await teamWithLogs(['p0', 'p1', 'p2', 'p3', 'p4']);
    const page = expectShape(
      PageOf(PromptLog),
      (await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs/paged?page=1&size=2&sort=created,asc', key: team.ownerKey })).json(),
    );
    expect(page).toMatchObject({ totalElements: 5, totalPages: 3, number: 1, size: 2, numberOfElements: 2, first: false, last: false, empty: false });
    expect(page.content.map((r) => r.prompt)).toEqual(['p2', 'p3']);
    const last = (await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs/paged?page=2&size=2&sort=created,asc', key: team.ownerKey })).json();
    expect(last).toMatchObject({ last: true, numberOfElements: 1 });
    const beyond = (await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs/paged?page=9&size=2', key: team.ownerKey })).json();
    expect(beyond).toMatchObject({ empty: true, content: [] });
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs/paged?sort=prompt,asc', key: team.ownerKey }), 400);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs/paged?sort=created;drop table', key: team.ownerKey }), 400);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs/paged?size=1001', key: team.ownerKey }), 400);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs/paged?page=-1', key: team.ownerKey }), 400);
  });

  it('exports CSV with a header, RFC 4180 quoting and formula-safe cells', async () => {
    const { team } = await teamWithLogs(['=HYPERLINK("http://evil")', 'plain, with "quotes"\nand a newline', '@SUM(A1)']);
    const res = await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs/csv?${qs(range)}`, key: team.ownerKey });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/csv');
    const lines = res.body.split('\r\n');
    expect(lines[0]).toBe('id,created,userId,workspaceId,threadId,modelId,modelName,prompt,response,promptTokens,completionTokens,latencyMs,status,error');
    expect(res.body).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(res.body).toContain(`'@SUM(A1)`);
    expect(res.body).toContain('"plain, with ""quotes""\nand a newline"');
    expect(res.body).not.toMatch(/,=HYPERLINK/);
  });

  it('keeps logs when their thread is deleted', async () => {
    const { team, ws } = await teamWithLogs(['keep me']);
    const threads = (await t.request({ method: 'GET', url: `/api/v1/chat/${ws.id}/history`, key: team.ownerKey })).json();
    await t.request({ method: 'DELETE', url: `/api/v1/chat/${ws.id}/history/${threads[0].id}`, key: team.ownerKey });
    const rows = (await t.request({ method: 'GET', url: `/api/v1/chat/prompt-logs?${qs(range)}`, key: team.ownerKey })).json();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ prompt: 'keep me', threadId: threads[0].id });
  });
});
