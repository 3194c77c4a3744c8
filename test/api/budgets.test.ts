import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Static } from 'typebox';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { promptLogs } from '../../src/db/schema/prompt-logs.js';
import { countTokens } from '../../src/ingest/tokens.js';
import { ChatRepo } from '../../src/modules/chat/repo.js';
import { Budget, MeUsage } from '../../src/modules/usage/schema.js';
import { expectStatus, type paths } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';

/**
 * Budgets and rate limits: who may set and see them, the reservation rule (refused
 * before the provider is called, nothing stored), Retry-After, settlement, and concurrency — on
 * PostgreSQL with two app instances sharing the database.
 */
let t: TestApp;
const stand = useStandIn();

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

/** 1 credit per token; every answer is 60 word chunks (max tokens 60), so a call costs its prompt + 60 credits. */
const PRICE = 1000;
const OUT = 60;
const LONG_REPLY = Array.from({ length: 80 }, (_, i) => `w${i}`).join(' ');
const ask = { prompt: 'hello world', maxTokens: OUT };

async function setup(app: TestApp = t) {
  const team = await newTeam(app);
  const model = await createModel(app, team.ownerKey, { url: stand.standIn.openaiBaseUrl, chatCredits: PRICE });
  const ws = await createWorkspace(app, team.ownerKey, { modelIds: [model.id] });
  stand.standIn.set({ reply: LONG_REPLY });
  return { team, model, ws };
}

type NewBudget = paths['/api/v1/budgets']['post']['requestBody']['content']['application/json'];
type BudgetChange = paths['/api/v1/budgets/{id}']['patch']['requestBody']['content']['application/json'];

const complete = (key: string, wsId: string, app: TestApp = t, body: typeof ask & { threadId?: string } = ask) =>
  app.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: wsId } }, body });

const createBudget = (key: string, body: NewBudget, app: TestApp = t) => app.api(key).POST('/api/v1/budgets', { body });
// raw: bodies the document rejects (wrong scope ids, periods, limits, extra fields)
const createBudgetRaw = (key: string, payload: object) => t.request({ method: 'POST', url: '/api/v1/budgets', key, payload });

async function budgetOk(key: string, body: NewBudget) {
  return expectShape(Budget, expectStatus(await createBudget(key, body), 201));
}

const deleteBudget = (key: string, id: string) => t.api(key).DELETE('/api/v1/budgets/{id}', { params: { path: { id } } });
const budgetsOf = async (app: TestApp, key: string) => expectStatus(await app.api(key).GET('/api/v1/budgets'), 200);
const patch = (app: TestApp, key: string, id: string, body: BudgetChange) => app.api(key).PATCH('/api/v1/budgets/{id}', { params: { path: { id } }, body });
const apiKeyIds = async (key: string) => expectStatus(await t.api(key).GET('/api/v1/api-keys'), 200).map((k) => k.id);

async function ledgerCredits(key: string): Promise<number> {
  return ledgerCreditsOn(t, key);
}

async function logCount(key: string): Promise<number> {
  return expectStatus(await t.api(key).GET('/api/v1/chat/prompt-logs/paged', { params: { query: { size: 1 } } }), 200).totalElements;
}

/** Seconds from now to the next UTC midnight. */
function secondsToMidnight(): number {
  const now = new Date();
  return (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
}

/** A rate-limit test must not straddle a minute boundary (the window is the calendar minute). */
async function awayFromMinuteEnd(): Promise<void> {
  const s = new Date().getUTCSeconds();
  if (s >= 50) await new Promise((r) => setTimeout(r, (61 - s) * 1000));
}

describe('managing budgets', () => {
  it('owner/admin create, list and delete; a member may not; the answer has the documented shape', async () => {
    const { team } = await setup();
    const admin = await team.addUser('admin');
    const member = await team.addUser('member');
    const b = await budgetOk(admin.key, { scope: 'team', scopeId: team.teamId, period: 'month', credits: 1000 });
    expect(b).toMatchObject({ scope: 'team', scopeId: team.teamId, period: 'month', credits: 1000, requestsPerMinute: null, spent: 0, remaining: 1000 });
    expect(new Date(b.resetsAt!).getTime()).toBeGreaterThan(Date.now());
    expect(expectProblem(await createBudget(member.key, { scope: 'user', scopeId: member.id, period: 'day', credits: 5 }), 403).code).toBe('forbidden');
    expectProblem(await deleteBudget(member.key, b.id), 403);
    expect((await deleteBudget(team.ownerKey, b.id)).response.status).toBe(204);
    expectProblem(await deleteBudget(team.ownerKey, b.id), 404);
  });

  it('validates the body: scope ids of the wrong form are 400, of another team 404, a duplicate 409', async () => {
    const { team } = await setup();
    const other = await newTeam(t);
    const otherMember = await other.addUser('member');
    const keyOfOther = (await apiKeyIds(other.ownerKey))[0]!;
    const k = team.ownerKey;
    for (const body of [
      { scope: 'user', scopeId: 'abc', period: 'day', credits: 1 },
      { scope: 'user', scopeId: -3, period: 'day', credits: 1 },
      { scope: 'team', scopeId: 'not-a-uuid', period: 'day', credits: 1 },
      { scope: 'apiKey', scopeId: 12, period: 'day', credits: 1 },
      { scope: 'team', scopeId: team.teamId, period: 'week', credits: 1 },
      { scope: 'planet', scopeId: team.teamId, period: 'day', credits: 1 },
      { scope: 'team', scopeId: team.teamId, period: 'day' },
      { scope: 'team', scopeId: team.teamId, period: 'day', credits: null, requestsPerMinute: null },
      { scope: 'team', scopeId: team.teamId, period: 'day', credits: -1 },
      { scope: 'team', scopeId: team.teamId, period: 'day', requestsPerMinute: 0 },
      { scope: 'team', scopeId: team.teamId, period: 'day', credits: 1, extra: true },
    ]) {
      expectProblem(await createBudgetRaw(k, body), 400);
    }
    // well formed, but not of this team: not found, exactly as a missing one
    expectProblem(await createBudget(k, { scope: 'team', scopeId: other.teamId, period: 'day', credits: 1 }), 404);
    expectProblem(await createBudget(k, { scope: 'user', scopeId: otherMember.id, period: 'day', credits: 1 }), 404);
    expectProblem(await createBudget(k, { scope: 'user', scopeId: 2_000_000_000, period: 'day', credits: 1 }), 404);
    expectProblem(await createBudget(k, { scope: 'apiKey', scopeId: keyOfOther, period: 'day', credits: 1 }), 404);
    // user ids are accepted as numbers or numeric strings
    await budgetOk(k, { scope: 'user', scopeId: String(team.ownerId), period: 'day', credits: 1 });
    expectProblem(await createBudget(k, { scope: 'user', scopeId: team.ownerId, period: 'day', credits: 2 }), 409);
    expectProblem(await deleteBudget(k, 'not-a-uuid'), 400);
    // another team's budget cannot be deleted (404, no existence leak)
    const theirs = await budgetOk(other.ownerKey, { scope: 'team', scopeId: other.teamId, period: 'day', credits: 1 });
    expectProblem(await deleteBudget(k, theirs.id), 404);
    expect((await budgetsOf(t, k)).map((b) => b.id)).not.toContain(theirs.id);
  });

  it('owner/admin change a budget\u2019s limits (left-out fields kept, null removes one, never both); others may not', async () => {
    const { team } = await setup();
    const member = await team.addUser('member');
    const other = await newTeam(t);
    const b = await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'day', credits: 100 });
    const change = (key: string, id: string, body: BudgetChange) => patch(t, key, id, body);
    const changed = expectStatus(await change(team.ownerKey, b.id, { requestsPerMinute: 30 }), 200);
    expect(expectShape(Budget, changed)).toMatchObject({ id: b.id, scope: 'team', period: 'day', credits: 100, requestsPerMinute: 30, remaining: 100 });
    expect((await change(team.ownerKey, b.id, { credits: null })).data).toMatchObject({ credits: null, requestsPerMinute: 30, remaining: null });
    // removing the last limit is refused, and nothing changes
    const both = expectProblem(await change(team.ownerKey, b.id, { requestsPerMinute: null }), 400);
    expect(both.detail).toContain('delete it instead');
    for (const payload of [{}, { credits: -1 }, { requestsPerMinute: 0 }, { period: 'month' }, { credits: 1, scope: 'user' }])
      // raw: bodies the document rejects (empty, out of range, fields that cannot change)
      expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/budgets/${b.id}`, key: team.ownerKey, payload }), 400);
    expectProblem(await change(team.ownerKey, 'not-a-uuid', { credits: 1 }), 400);
    expectProblem(await change(member.key, b.id, { credits: 1 }), 403);
    expectProblem(await change(other.ownerKey, b.id, { credits: 1 }), 404);
    const listed: Array<Static<typeof Budget>> = await budgetsOf(t, team.ownerKey);
    expect(listed.find((x) => x.id === b.id)).toMatchObject({ credits: null, requestsPerMinute: 30 });
  });

  it('a changed credit limit is enforced at once and keeps the period\u2019s spend', async () => {
    const { team, ws } = await setup();
    const b = await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'day', credits: 1_000_000 });
    expect((await complete(team.ownerKey, ws.id)).response.status).toBe(200);
    const spent = (await budgetsOf(t, team.ownerKey))[0]!.spent;
    expect(spent).toBeGreaterThan(0);
    const lowered = (await patch(t, team.ownerKey, b.id, { credits: spent })).data;
    expect(lowered).toMatchObject({ credits: spent, spent, remaining: 0 });
    expect(expectProblem(await complete(team.ownerKey, ws.id), 429).code).toBe('budget_exceeded');
  });

  it('a member sees the budgets that apply to them (team, their own, their keys), never another member\u2019s', async () => {
    const { team } = await setup();
    const m1 = await team.addUser('member');
    const m2 = await team.addUser('member');
    const m1Key = (await apiKeyIds(m1.key))[0]!;
    const teamB = await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'month', credits: 100 });
    const m1B = await budgetOk(team.ownerKey, { scope: 'user', scopeId: m1.id, period: 'day', credits: 10 });
    const m1KeyB = await budgetOk(team.ownerKey, { scope: 'apiKey', scopeId: m1Key, period: 'total', requestsPerMinute: 100 });
    const m2B = await budgetOk(team.ownerKey, { scope: 'user', scopeId: m2.id, period: 'day', credits: 10 });
    const ids = async (key: string) => (await budgetsOf(t, key)).map((b) => b.id).sort();
    expect(await ids(m1.key)).toEqual([teamB.id, m1B.id, m1KeyB.id].sort());
    expect(await ids(m2.key)).toEqual([teamB.id, m2B.id].sort());
    expect(await ids(team.ownerKey)).toEqual([teamB.id, m1B.id, m1KeyB.id, m2B.id].sort());
    const me = expectShape(MeUsage, (await t.api(m2.key).GET('/api/v1/me/usage')).data);
    expect((me.budgets as Array<Static<typeof Budget>>).map((b) => b.id).sort()).toEqual([teamB.id, m2B.id].sort());
  });
});

describe('enforcing budgets', () => {
  it('a member past their daily budget gets 429 budget_exceeded until midnight UTC; the provider is not called and nothing is stored', async () => {
    const { team, ws } = await setup();
    const member = await team.addUser('member');
    const teamBudget = await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'month', credits: 100_000 });
    // covers one call's reservation (prompt estimate + 60), not two calls
    await budgetOk(team.ownerKey, { scope: 'user', scopeId: member.id, period: 'day', credits: 100 });
    expect((await complete(member.key, ws.id)).response.status).toBe(200);
    expect(stand.standIn.requests).toHaveLength(1);
    const logsBefore = await logCount(team.ownerKey);

    const refused = await complete(member.key, ws.id);
    const p = expectProblem(refused, 429);
    expect(p.code).toBe('budget_exceeded');
    const retryAfter = Number(refused.response.headers.get('retry-after'));
    expect(Math.abs(retryAfter - secondsToMidnight())).toBeLessThanOrEqual(5);
    expect(stand.standIn.requests).toHaveLength(1);
    expect(await logCount(team.ownerKey)).toBe(logsBefore);
    // the streamed route refuses the same way, before any event
    const streamed = await t.api(member.key).POST('/api/v1/chat/{workspaceId}/completions/stream', {
      params: { path: { workspaceId: ws.id } },
      body: ask,
      parseAs: 'text',
    });
    expect(expectProblem(streamed, 429).code).toBe('budget_exceeded');
    expect(stand.standIn.requests).toHaveLength(1);

    // the owner is not limited by the member's budget; both spend under the team's, settled to the real cost
    expect((await complete(team.ownerKey, ws.id)).response.status).toBe(200);
    const spent = await ledgerCredits(team.ownerKey);
    const teamNow = (await budgetsOf(t, team.ownerKey)).find((b) => b.id === teamBudget.id)!;
    expect(teamNow.spent).toBeCloseTo(spent, 6);
    expect(teamNow.remaining).toBeCloseTo(100_000 - spent, 6);
    const me = expectShape(MeUsage, (await t.api(member.key).GET('/api/v1/me/usage')).data);
    const daily = (me.budgets as Array<Static<typeof Budget>>).find((b) => b.scope === 'user')!;
    expect(daily.spent).toBeCloseTo(me.spent.day, 6);
    expect(daily.remaining).toBeCloseTo(100 - me.spent.day, 6);
  });

  it('a total budget refuses without Retry-After; an API key budget limits only that key', async () => {
    const { team, ws } = await setup();
    const second = expectStatus(await t.api(team.ownerKey).POST('/api/v1/api-keys', { body: { name: 'ci' } }), 201);
    await budgetOk(team.ownerKey, { scope: 'apiKey', scopeId: second.id, period: 'total', credits: 1 });
    const refused = await complete(second.key!, ws.id);
    expect(expectProblem(refused, 429).code).toBe('budget_exceeded');
    expect(refused.response.headers.get('retry-after')).toBeNull();
    expect(stand.standIn.requests).toHaveLength(0);
    expect((await complete(team.ownerKey, ws.id)).response.status).toBe(200);
  });

  it('a free model (chatCredits 0) is not held by a credit budget', async () => {
    const { team } = await setup();
    const free = await createModel(t, team.ownerKey, { url: stand.standIn.openaiBaseUrl, chatCredits: 0 });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [free.id] });
    await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'day', credits: 1 });
    expect((await complete(team.ownerKey, ws.id)).response.status).toBe(200);
    expect((await complete(team.ownerKey, ws.id)).response.status).toBe(200);
    expect(await ledgerCredits(team.ownerKey)).toBe(0);
  });

  it('a rate limit refuses the call past its requests per minute with 429 rate_limited and Retry-After', async () => {
    const { team, ws } = await setup();
    const member = await team.addUser('member');
    await budgetOk(team.ownerKey, { scope: 'user', scopeId: member.id, period: 'day', requestsPerMinute: 2 });
    await awayFromMinuteEnd();
    expect((await complete(member.key, ws.id)).response.status).toBe(200);
    expect((await complete(member.key, ws.id)).response.status).toBe(200);
    const refused = await complete(member.key, ws.id);
    expect(expectProblem(refused, 429).code).toBe('rate_limited');
    const retryAfter = Number(refused.response.headers.get('retry-after'));
    const toNextMinute = 60 - new Date().getUTCSeconds();
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(Math.abs(retryAfter - toNextMinute)).toBeLessThanOrEqual(2);
    expect(stand.standIn.requests).toHaveLength(2);
    // another member is not limited
    const other = await team.addUser('member');
    expect((await complete(other.key, ws.id)).response.status).toBe(200);
  });

  it('a failed call gives its reservation back: the budget is charged nothing', async () => {
    const { team, ws } = await setup();
    const b = await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'day', credits: 1000 });
    stand.standIn.set({ failStatus: 500 });
    expectProblem(await complete(team.ownerKey, ws.id), 502);
    const now = (await budgetsOf(t, team.ownerKey)).find((x) => x.id === b.id)!;
    expect(now.spent).toBe(0);
    const rows = (await t.api(team.ownerKey).GET('/api/v1/usage', { params: { query: { groupBy: 'model' } } })).data;
    expect(rows).toEqual([expect.objectContaining({ requests: 1, credits: 0 })]);
  });
});

describe('settling', () => {
  it('an answer statement run twice (a retry of one that had committed) settles its budgets once', async () => {
    const { team, ws } = await setup();
    const key = team.ownerKey;
    expectStatus(await createBudget(key, { scope: 'team', scopeId: team.teamId, period: 'month', credits: 100_000 }), 201);
    // a streamed turn with no thread kept: its statement 2 has no message for a second run to collide on
    const original = ChatRepo.prototype.recordAnswers;
    const twice = vi.spyOn(ChatRepo.prototype, 'recordAnswers').mockImplementationOnce(async function (this: ChatRepo, ...args) {
      await original.apply(this, args);
      return original.apply(this, args);
    });
    try {
      const res = await t.api(key).POST('/v1/chat/completions', {
        body: { model: `workspace/${ws.id}`, messages: [{ role: 'user', content: 'hello world' }], max_tokens: OUT, stream: true },
        parseAs: 'text',
      });
      expect(String(res.data)).toContain('[DONE]');
      expect(twice).toHaveBeenCalled();
    } finally {
      twice.mockRestore();
    }
    const spent = (await budgetsOf(t, key))[0]!.spent;
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeCloseTo(await ledgerCredits(key), 6);
  });
});

describe('concurrency', () => {
  /**
   * 50 calls at once against a budget that covers 10 calls' real cost (and no 11th reservation):
   * never more than 10 are served, however the calls interleave. With ATRIUM_TEST_DATABASE_URL
   * the calls are spread over two app instances on the same PostgreSQL database.
   */
  it('50 concurrent calls against a budget that covers 10: never more than 10 served, the provider called only for them', async () => {
    const shared = Boolean(process.env.ATRIUM_TEST_DATABASE_URL);
    const second = shared ? await startTestApp() : t;
    try {
      const { team, ws } = await setup();
      // the real cost of one call, from a call made before the budget exists
      expect((await complete(team.ownerKey, ws.id)).response.status).toBe(200);
      const cost = await ledgerCredits(team.ownerKey);
      expect(cost).toBeGreaterThan(OUT);
      stand.standIn.reset();
      stand.standIn.set({ reply: LONG_REPLY });
      const credits = cost * 10.5;
      const b = await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'month', credits });
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => complete(team.ownerKey, ws.id, i % 2 === 0 ? t : second)));
      const served = results.filter((r) => r.response.status === 200).length;
      for (const r of results.filter((x) => x.response.status !== 200)) {
        expect(expectProblem(r, 429).code).toBe('budget_exceeded');
        expect(Number(r.response.headers.get('retry-after'))).toBeGreaterThan(0);
      }
      expect(served).toBeGreaterThanOrEqual(1);
      expect(served).toBeLessThanOrEqual(10);
      expect(stand.standIn.requests).toHaveLength(served);
      // after the burst, calls one by one fill the budget up to exactly 10 and no further
      let total = served;
      for (let i = 0; i < 15; i++) {
        const r = await complete(team.ownerKey, ws.id, i % 2 === 0 ? second : t);
        if (r.response.status !== 200) {
          expect(expectProblem(r, 429).code).toBe('budget_exceeded');
          break;
        }
        total++;
      }
      expect(total).toBe(10);
      expect(stand.standIn.requests).toHaveLength(10);
      const spent = (await ledgerCredits(team.ownerKey)) - cost;
      expect(spent).toBeLessThanOrEqual(credits);
      const now = (await budgetsOf(t, team.ownerKey)).find((x) => x.id === b.id)!;
      expect(now.spent).toBeCloseTo(spent, 6);
    } finally {
      if (second !== t) await second.close();
    }
  });

  /**
   * A node that has just served a team (and so read its budgets) must see a budget another node
   * creates on the very next call: with ATRIUM_TEST_DATABASE_URL the two are separate app
   * instances on one PostgreSQL database, on the embedded database the same one.
   */
  it('a budget created on one node binds the next call on another that has just served the team', async () => {
    const shared = Boolean(process.env.ATRIUM_TEST_DATABASE_URL);
    const second = shared ? await startTestApp() : t;
    try {
      const { team, ws } = await setup();
      expect((await complete(team.ownerKey, ws.id, second)).response.status).toBe(200);
      expect(stand.standIn.requests).toHaveLength(1);
      // less than one call's reservation (prompt estimate + OUT), created on the first node
      await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'month', credits: OUT });
      const refused = await complete(team.ownerKey, ws.id, second);
      expect(expectProblem(refused, 429).code).toBe('budget_exceeded');
      expect(stand.standIn.requests).toHaveLength(1);
    } finally {
      if (second !== t) await second.close();
    }
  });

  it('a budget changed, then deleted, on one node binds the next call on another that has just served the team', async () => {
    const shared = Boolean(process.env.ATRIUM_TEST_DATABASE_URL);
    const second = shared ? await startTestApp() : t;
    try {
      const { team } = await setup();
      // a free model: a credit budget does not apply to it, a rate limit does
      const free = await createModel(t, team.ownerKey, { url: stand.standIn.openaiBaseUrl, chatCredits: 0 });
      const ws = await createWorkspace(t, team.ownerKey, { modelIds: [free.id] });
      const budget = await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'month', credits: 1 });
      for (let i = 0; i < 2; i++) expect((await complete(team.ownerKey, ws.id, second)).response.status).toBe(200);
      // a rate limit added on the first node: the second holds its calls to it
      expectStatus(await patch(t, team.ownerKey, budget.id, { requestsPerMinute: 1 }), 200);
      const [a, b] = [await complete(team.ownerKey, ws.id, second), await complete(team.ownerKey, ws.id, second)];
      expect(expectProblem(a.response.status === 429 ? a : b, 429).code).toBe('rate_limited');
      // gone on the first node: the second answers again
      expect((await deleteBudget(team.ownerKey, budget.id)).response.status).toBe(204);
      expect((await complete(team.ownerKey, ws.id, second)).response.status).toBe(200);
    } finally {
      if (second !== t) await second.close();
    }
  });

  /**
   * Providers that do not honour the output cap and count the prompt four times higher than
   * Atrium does: bursts of streamed and plain calls, on two nodes where the database allows it,
   * against a budget created just before them. The budget is never overspent, each streamed
   * answer is cut at the output tokens it reserved (finish reason `length`), and the provider's
   * over-count sizes the next reservations.
   */
  it('a burst against providers that ignore max tokens and over-count never overspends the budget', { timeout: 60_000 }, async () => {
    const shared = Boolean(process.env.ATRIUM_TEST_DATABASE_URL);
    const second = shared ? await startTestApp() : t;
    try {
      const { team, ws } = await setup();
      stand.standIn.set({ reply: Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' '), ignoreMaxTokens: true, promptTokensFactor: 4 });
      const credits = 2_000;
      await budgetOk(team.ownerKey, { scope: 'team', scopeId: team.teamId, period: 'month', credits });
      const node = (i: number) => (i % 2 === 0 ? t : second);
      const stream = (i: number) =>
        node(i)
          .api(team.ownerKey)
          .POST('/api/v1/chat/{workspaceId}/completions/stream', { params: { path: { workspaceId: ws.id } }, body: ask, parseAs: 'text' });
      const plain = (i: number) => complete(team.ownerKey, ws.id, node(i));
      const finishes: string[] = [];
      for (let round = 0; round < 3; round++) {
        const results = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 4 === 0 ? plain(i) : stream(i))));
        for (const r of results) expect([200, 429]).toContain(r.response.status);
        for (const r of results.filter((x) => x.response.status === 200)) {
          const streamed = r.response.headers.get('content-type')?.startsWith('text/event-stream');
          const body = typeof r.data === 'string' ? r.data : JSON.stringify(r.data);
          const done = /event: done\ndata: (.*)\n/.exec(body);
          // a stream that ended in an error event says which (instead of failing to parse it)
          expect(!streamed || done !== null, /event: error\ndata: (.*)\n/.exec(body)?.[1] ?? body.slice(-300)).toBe(true);
          finishes.push(done ? (JSON.parse(done[1]!) as { finishReason: string }).finishReason : (r.data as { finishReason: string }).finishReason);
        }
      }
      const spent = await ledgerCredits(team.ownerKey);
      expect(spent).toBeGreaterThan(0);
      expect(spent).toBeLessThanOrEqual(credits + 1e-6);
      expect(finishes.length).toBeGreaterThan(0);
      expect(new Set(finishes)).toEqual(new Set(['length']));
      const listed = (await budgetsOf(t, team.ownerKey))[0]!;
      expect(listed.spent).toBeCloseTo(spent, 6);
      // every answer stopped at the reserved output: no stored answer is longer than the cap
      const threads = expectStatus(await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId: ws.id } } }), 200);
      expect(threads.length).toBeGreaterThan(0);
      for (const th of threads.slice(0, 5)) {
        const full = expectStatus(
          await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.id, threadId: th.id } } }),
          200,
        );
        for (const m of full.messages.filter((x) => x.role === 'assistant')) expect(countTokens(m.content)).toBeLessThanOrEqual(OUT);
      }
    } finally {
      if (second !== t) await second.close();
    }
  });
});

describe('where the counters live', () => {
  /**
   * On the embedded database the counters live in the process (modules/usage/counters-memory.ts):
   * a restart must rebuild each budget's spend from the ledger — only what was spent since the
   * budget exists — and keep enforcing it, follow-ups priced with their thread's history included.
   * Run on PostgreSQL too (a second app on the same database), where the row carries the spend.
   */
  it('a budget\u2019s spend survives a restart and is still enforced, for new threads and follow-ups alike', async () => {
    const where = process.env.ATRIUM_TEST_DATABASE_URL ? {} : { databaseUrl: null, dataDir: mkdtempSync(path.join(tmpdir(), 'atrium-restart-')) };
    let app = await startTestApp(where);
    let key: string;
    let budgetId: string;
    let wsId: string;
    let threadId: string;
    let spent: number;
    try {
      const { team, ws } = await setup(app);
      key = team.ownerKey;
      wsId = ws.id;
      // spend before the budget exists is not the budget's
      expect((await complete(key, ws.id, app)).response.status).toBe(200);
      const before = await ledgerCreditsOn(app, key);
      const b = expectStatus(await createBudget(key, { scope: 'team', scopeId: team.teamId, period: 'month', credits: 100_000 }, app), 201);
      budgetId = b.id;
      threadId = expectStatus(await complete(key, ws.id, app), 200).threadId;
      expect((await complete(key, ws.id, app)).response.status).toBe(200);
      spent = (await ledgerCreditsOn(app, key)) - before;
      expect(spent).toBeGreaterThan(2 * OUT);
      expect((await budgetsOf(app, key))[0]!.spent).toBeCloseTo(spent, 6);
    } finally {
      await app.close();
    }

    app = await startTestApp(where);
    try {
      const [b] = await budgetsOf(app, key);
      expect(b).toMatchObject({ id: budgetId, credits: 100_000 });
      expect(b!.spent).toBeCloseTo(spent, 6);
      expect(b!.remaining).toBeCloseTo(100_000 - spent, 6);
      // room for one more new-thread call's reservation (prompt estimate + 60), not for the same
      // question in the thread, whose last exchange (~ prompt + 60 tokens) the reservation adds
      expect((await patch(app, key, budgetId, { credits: spent + 100 })).response.status).toBe(200);
      const followUp = await complete(key, wsId, app, { ...ask, threadId });
      expect(expectProblem(followUp, 429).code).toBe('budget_exceeded');
      expect((await complete(key, wsId, app)).response.status).toBe(200);
      const after = (await budgetsOf(app, key))[0]!;
      expect(after.spent).toBeGreaterThan(spent + OUT);
      // and less room than one reservation: refused, nothing sent to the provider
      expect((await patch(app, key, budgetId, { credits: after.spent + 50 })).response.status).toBe(200);
      const calls = stand.standIn.requests.length;
      expect(expectProblem(await complete(key, wsId, app), 429).code).toBe('budget_exceeded');
      expect(stand.standIn.requests).toHaveLength(calls);
    } finally {
      await app.close();
    }
  }, 90_000); // two starts of an on-disk embedded database

  /**
   * A node that dies between the two statements leaves its turn's reservation counted. On
   * PostgreSQL the pending log carries it, and once the stale-log sweep has finished that log the
   * reservation sweep gives it back — once, however many nodes sweep together. On the embedded
   * database it dies with the process: the restart rebuilds the spend from the ledger.
   */
  it('a reservation a crashed node left is given back: by the sweep, once (PostgreSQL), by the restart (embedded)', async () => {
    const pg = Boolean(process.env.ATRIUM_TEST_DATABASE_URL);
    const where = pg ? {} : { databaseUrl: null, dataDir: mkdtempSync(path.join(tmpdir(), 'atrium-crash-')) };
    let app = await startTestApp(where);
    let key = '';
    let settled = 0;
    try {
      const { team, ws } = await setup(app);
      key = team.ownerKey;
      expectStatus(await createBudget(key, { scope: 'team', scopeId: team.teamId, period: 'month', credits: 100_000 }, app), 201);
      const calls = [];
      for (let i = 0; i < 3; i++) calls.push(await complete(key, ws.id, app));
      expect(calls.map((c) => c.response.status)).toEqual([200, 200, 200]);
      settled = (await budgetsOf(app, key))[0]!.spent;
      expect(settled).toBeCloseTo(await ledgerCreditsOn(app, key), 6);
      // a follow-up (its reservation priced with the thread's history in SQL) whose node dies after
      // statement 1: never resumed, so neither statement 2 nor its `finally` runs
      const me = expectStatus(await app.api(key).GET('/api/v1/me'), 200);
      const keyId = expectStatus(await app.api(key).GET('/api/v1/api-keys'), 200)[0]!.id;
      const caller = {
        keyId,
        sessionId: null,
        userId: me.user.id,
        name: me.user.name,
        email: me.user.email,
        role: 'owner' as const,
        instanceAdmin: false,
        teamId: team.teamId,
        teamName: me.team.name,
      };
      const turn = app.services.turns.run(caller, ws.id, { prompt: 'lost in a crash', maxTokens: OUT, threadId: calls[0]!.data!.threadId }, { stream: true });
      expect((await turn.next()).value).toMatchObject({ type: 'start' });
      const held = (await budgetsOf(app, key))[0]!.spent;
      expect(held).toBeGreaterThan(settled + OUT);
      if (pg) {
        // what the stale-log sweep does to it once it is older than any call can run (for this log only: the database is shared)
        const logs = expectStatus(await app.api(key).GET('/api/v1/chat/prompt-logs/paged', { params: { query: { size: 10 } } }), 200).content;
        const lost = logs.find((l) => l.status === 'pending')!;
        await app.database.db.update(promptLogs).set({ status: 'interrupted', error: 'abandoned: test' }).where(eq(promptLogs.id, lost.id));
        const other = await startTestApp();
        try {
          await Promise.all([app.services.usage.releaseAbandoned(), other.services.usage.releaseAbandoned(), app.services.usage.releaseAbandoned()]);
        } finally {
          await other.close();
        }
        expect((await budgetsOf(app, key))[0]!.spent).toBeCloseTo(settled, 6);
        await app.services.usage.releaseAbandoned();
        expect((await budgetsOf(app, key))[0]!.spent).toBeCloseTo(settled, 6);
        return;
      }
    } finally {
      await app.close();
    }
    app = await startTestApp(where);
    try {
      expect((await budgetsOf(app, key))[0]!.spent).toBeCloseTo(settled, 6);
    } finally {
      await app.close();
    }
  }, 90_000); // two starts of an on-disk embedded database

  it('a deleted budget stops counting at once; one created again starts from nothing and binds at once', async () => {
    const { team, ws } = await setup();
    const b = await budgetOk(team.ownerKey, { scope: 'user', scopeId: team.ownerId, period: 'day', credits: 100 });
    expect((await complete(team.ownerKey, ws.id)).response.status).toBe(200);
    expect(expectProblem(await complete(team.ownerKey, ws.id), 429).code).toBe('budget_exceeded');
    expect((await deleteBudget(team.ownerKey, b.id)).response.status).toBe(204);
    expect((await complete(team.ownerKey, ws.id)).response.status).toBe(200);
    // the same scope and period again: a new budget, with nothing spent yet although the day's ledger has two calls
    const again = await budgetOk(team.ownerKey, { scope: 'user', scopeId: team.ownerId, period: 'day', credits: 200 });
    expect(again.spent).toBe(0);
    expect((await complete(team.ownerKey, ws.id)).response.status).toBe(200);
    const spent = (await budgetsOf(t, team.ownerKey))[0]!.spent;
    expect(spent).toBeGreaterThan(OUT);
    expect(spent).toBeLessThan(200);
    // lowered below what one more call reserves: refused at once
    expect((await patch(t, team.ownerKey, again.id, { credits: spent + 10 })).response.status).toBe(200);
    expect(expectProblem(await complete(team.ownerKey, ws.id), 429).code).toBe('budget_exceeded');
    // a rate limit added to it binds at once too (and a rate-limit refusal says so)
    expect((await patch(t, team.ownerKey, again.id, { credits: null, requestsPerMinute: 1 })).response.status).toBe(200);
    await awayFromMinuteEnd();
    const r1 = await complete(team.ownerKey, ws.id);
    const r2 = await complete(team.ownerKey, ws.id);
    expect([r1.response.status, r2.response.status]).toContain(429);
    expect(expectProblem(r1.response.status === 429 ? r1 : r2, 429).code).toBe('rate_limited');
  });
});

async function ledgerCreditsOn(app: TestApp, key: string): Promise<number> {
  const rows = expectStatus(await app.api(key).GET('/api/v1/usage', { params: { query: { groupBy: 'user' } } }), 200);
  return rows.reduce((s, r) => s + r.credits, 0);
}
