import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { UsageRow } from '../../src/modules/usage/schema.js';
import createClient from 'openapi-fetch';
import { expectStatus, type paths } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { parseSse } from '../helpers/sse.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';

/**
 * The usage ledger: every attempt on every path is recorded once with its tokens and
 * credits, settled to what it really used; reports by day, user, model, workspace and API key,
 * as JSON and CSV, a member seeing only their own.
 */
let t: TestApp;
const stand = useStandIn();
let baseUrl: string;

beforeAll(async () => {
  t = await startTestApp({ providerTimeouts: { connectMs: 2000, totalMs: 5000, idleMs: 3000 } });
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
});

const PRICE = 500; // credits per 1,000 tokens

async function setup() {
  const team = await newTeam(t);
  const model = await createModel(t, team.ownerKey, { url: stand.standIn.openaiBaseUrl, chatCredits: PRICE });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
  return { team, model, ws };
}

type TurnBody = { prompt: string; threadId?: string; maxTokens?: number };
const complete = (key: string, wsId: string, body: TurnBody) =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: wsId } }, body });
const Rows = Type.Array(UsageRow);
type UsageQuery = { groupBy?: 'day' | 'user' | 'model' | 'workspace' | 'apiKey'; from?: string; to?: string };

async function usage(key: string, query: UsageQuery) {
  const res = await t.api(key).GET('/api/v1/usage', { params: { query } });
  expect(res.response.status, JSON.stringify(res.error)).toBe(200);
  return expectShape(Rows, res.data);
}

/** Over a real socket: cancelling the read there aborts the request, as a browser closing the tab does. */
function openStream(key: string, wsId: string, body: TurnBody) {
  const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${key}` } });
  return api.POST('/api/v1/chat/{workspaceId}/completions/stream', { params: { path: { workspaceId: wsId } }, body, parseAs: 'stream' });
}

async function budgetSpent(key: string, id: string): Promise<number> {
  return expectStatus(await t.api(key).GET('/api/v1/budgets'), 200).find((b) => b.id === id)!.spent;
}

describe('the ledger', () => {
  it('records a plain and a streamed call with the provider\u2019s tokens, priced by chatCredits', async () => {
    const { team, model, ws } = await setup();
    const plain = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'count these words please' }), 200);
    const streamed = parseSse(await new Response((await openStream(team.ownerKey, ws.id, { prompt: 'and stream these too' })).data).text());
    const done = streamed.find((e) => e.event === 'done')!.data.usage as { promptTokens: number; completionTokens: number };
    const prompt = plain.usage.promptTokens + done.promptTokens;
    const completion = plain.usage.completionTokens + done.completionTokens;
    const [row] = await usage(team.ownerKey, { groupBy: 'model' });
    expect(row).toEqual({ key: model.id, requests: 2, promptTokens: prompt, completionTokens: completion, credits: ((prompt + completion) * PRICE) / 1000 });
  });

  it('an interrupted stream is settled to what was sent and received, and its reservation to that cost', async () => {
    const { team, ws } = await setup();
    const b = expectStatus(
      await t.api(team.ownerKey).POST('/api/v1/budgets', { body: { scope: 'team', scopeId: team.teamId, period: 'day', credits: 10_000 } }),
      201,
    );
    stand.standIn.set({ reply: Array.from({ length: 40 }, (_, i) => `word${i}`).join(' '), chunkDelayMs: 100 });
    const res = await openStream(team.ownerKey, ws.id, { prompt: 'tell me a long story', maxTokens: 100 });
    const reader = res.data!.getReader();
    const dec = new TextDecoder();
    let text = '';
    while (!text.includes('event: delta')) text += dec.decode((await reader.read()).value, { stream: true });
    await reader.cancel();
    await stand.standIn.waitForAbortedRequests(1);
    let rows = await usage(team.ownerKey, { groupBy: 'user' });
    for (let i = 0; i < 200 && rows.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
      rows = await usage(team.ownerKey, { groupBy: 'user' });
    }
    const [row] = rows;
    expect(row!.requests).toBe(1);
    // fewer than the 40 words of the full answer, at least the one that arrived
    expect(row!.completionTokens).toBeGreaterThan(0);
    expect(row!.completionTokens).toBeLessThan(40);
    expect(row!.credits).toBeCloseTo(((row!.promptTokens + row!.completionTokens) * PRICE) / 1000, 9);
    expect(await budgetSpent(team.ownerKey, b.id)).toBeCloseTo(row!.credits, 9);
    const logs = expectStatus(await t.api(team.ownerKey).GET('/api/v1/chat/prompt-logs/paged'), 200).content;
    expect(logs[0]!.status).toBe('interrupted');
  });

  it('a follow-up reserves with its history; a refused follow-up stores no message in the thread', async () => {
    const { team, ws } = await setup();
    const first = expectStatus(await complete(team.ownerKey, ws.id, { prompt: 'first question here', maxTokens: 50 }), 200);
    const firstCost = (await usage(team.ownerKey, { groupBy: 'user' }))[0]!.credits;
    // room for a new short question, not for the same question with the thread's history on top
    await t.api(team.ownerKey).POST('/api/v1/budgets', { body: { scope: 'team', scopeId: team.teamId, period: 'month', credits: 40 } });
    const refused = await complete(team.ownerKey, ws.id, { prompt: 'second', threadId: first.threadId, maxTokens: 50 });
    expect(expectProblem(refused, 429).code).toBe('budget_exceeded');
    const thread = (
      await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.id, threadId: first.threadId } } })
    ).data;
    expect(thread?.messages).toHaveLength(2);
    expect(stand.standIn.requests).toHaveLength(1);
    expect((await complete(team.ownerKey, ws.id, { prompt: 'second', maxTokens: 50 })).response.status).toBe(200);
    expect((await usage(team.ownerKey, { groupBy: 'user' }))[0]!.credits).toBeGreaterThan(firstCost);
  });
});

describe('reports', () => {
  it('groups by day, user, model, workspace and apiKey; a member sees only their own, the owner the team', async () => {
    const { team, model, ws } = await setup();
    const member = await team.addUser('member');
    const other = await newTeam(t);
    const otherModel = await createModel(t, other.ownerKey, { url: stand.standIn.openaiBaseUrl, chatCredits: PRICE });
    const otherWs = await createWorkspace(t, other.ownerKey, { modelIds: [otherModel.id] });
    const ws2 = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    await complete(team.ownerKey, ws.id, { prompt: 'owner one' });
    await complete(team.ownerKey, ws2.id, { prompt: 'owner two' });
    await complete(member.key, ws.id, { prompt: 'member one' });
    await complete(other.ownerKey, otherWs.id, { prompt: 'another team' });

    const byUser = await usage(team.ownerKey, { groupBy: 'user' });
    expect(byUser.map((r) => [r.key, r.requests]).sort()).toEqual(
      [
        [String(team.ownerId), 2],
        [String(member.id), 1],
      ].sort(),
    );
    expect((await usage(team.ownerKey, { groupBy: 'workspace' })).map((r) => [r.key, r.requests]).sort()).toEqual(
      [
        [ws.id, 2],
        [ws2.id, 1],
      ].sort(),
    );
    const keys = expectStatus(await t.api(member.key).GET('/api/v1/api-keys'), 200);
    expect(await usage(member.key, { groupBy: 'apiKey' })).toEqual([expect.objectContaining({ key: keys[0]!.id, requests: 1 })]);
    const today = new Date().toISOString().slice(0, 10);
    expect(await usage(team.ownerKey, { groupBy: 'day' })).toEqual([expect.objectContaining({ key: today, requests: 3 })]);
    // the member: only their own call, whatever the grouping
    expect(await usage(member.key, { groupBy: 'user' })).toEqual([expect.objectContaining({ key: String(member.id), requests: 1 })]);
    expect(await usage(member.key, { groupBy: 'workspace' })).toEqual([expect.objectContaining({ key: ws.id, requests: 1 })]);
    // the range: from inclusive, to exclusive
    const past = new Date(Date.now() - 86_400_000).toISOString();
    expect(await usage(team.ownerKey, { groupBy: 'day', to: past })).toEqual([]);
    expect(await usage(team.ownerKey, { groupBy: 'day', from: past })).toHaveLength(1);
    const owner = t.api(team.ownerKey);
    // raw: a grouping the document does not have
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/usage?groupBy=planet', key: team.ownerKey }), 400);
    expectProblem(await owner.GET('/api/v1/usage', { params: { query: { from: 'yesterday' } } }), 400);
    expectProblem(await owner.GET('/api/v1/usage', { params: { query: { from: new Date().toISOString(), to: past } } }), 400);
    expectProblem(await t.api().GET('/api/v1/usage'), 401);

    // CSV: the same rows, a header, RFC 4180
    const csv = await owner.GET('/api/v1/usage/csv', { params: { query: { groupBy: 'user' } }, parseAs: 'text' });
    expect(csv.response.status).toBe(200);
    expect(csv.response.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (csv.data ?? '').trim().split('\r\n');
    expect(lines[0]).toBe('key,requests,promptTokens,completionTokens,credits');
    expect(lines.slice(1).sort()).toEqual(byUser.map((r) => `${r.key},${r.requests},${r.promptTokens},${r.completionTokens},${r.credits}`).sort());
    const memberCsv = await t.api(member.key).GET('/api/v1/usage/csv', { params: { query: { groupBy: 'user' } }, parseAs: 'text' });
    expect((memberCsv.data ?? '').trim().split('\r\n')).toHaveLength(2);

    // me/usage: the caller's own spend
    const me = (await t.api(member.key).GET('/api/v1/me/usage')).data;
    const mine = (await usage(member.key, { groupBy: 'user' }))[0]!.credits;
    expect(me).toMatchObject({ userId: member.id, spent: { day: mine, month: mine, total: mine }, budgets: [] });
  });
});
