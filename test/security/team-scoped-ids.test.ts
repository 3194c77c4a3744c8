/**
 * Client-chosen ids are unique per team (docs/DECISIONS.md, "A taken client-chosen id"): an id
 * another team holds answers as a free one — the create succeeds — and the two teams' workspaces,
 * models and Plus entries of one id never mix, in reads, lists, updates, deletes, chat turns,
 * their sources, history, search, exports and prompt logs. An id taken in the caller's own team
 * stays a 409.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel } from '../helpers/factories.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { useStandIn } from '../support/use-standin.js';

let t: TestApp;
const stand = useStandIn({ reset: false });
let a: TeamFixture;
let b: TeamFixture;

beforeAll(async () => {
  t = await startTestApp();
  a = await newTeam(t);
  b = await newTeam(t);
});
afterAll(async () => {
  await t.close();
});

function createPlus(key: string, fields: Record<string, string>, text?: string) {
  const parts = [
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    ...(text ? [{ name: 'files', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from(text) }] : []),
  ];
  return t.api(key).POST('/api/v1/plus', multipartBody(parts));
}

const modelBody = (id: string, name: string) =>
  ({ id, name, apiBase: 'OPENAI', url: stand.standIn.openaiBaseUrl, baseModel: 'gpt-test', contextWindow: 8192 }) as const;
const path = <P>(p: P) => ({ params: { path: p } });

describe('an id another team holds', () => {
  const wsId = randomUUID();
  const modelId = randomUUID();
  const plusId = randomUUID();
  // what each team put under the same three ids
  const own = {
    a: { ws: 'Alpha workspace', model: 'Alpha model', plus: 'Alpha notes', secret: 'aardvark', prompt: 'alpha question about the aardvark' },
    b: { ws: 'Beta workspace', model: 'Beta model', plus: 'Beta notes', secret: 'buffalo', prompt: 'beta question about the buffalo' },
  };

  it('is created as a free id would be, in each team', async () => {
    for (const [team, o] of [
      [a, own.a],
      [b, own.b],
    ] as const) {
      const api = t.api(team.ownerKey);
      const m = await api.POST('/api/v1/models', { body: modelBody(modelId, o.model) });
      expect(m.response.status).toBe(200);
      expect(m.data).toMatchObject({ id: modelId, name: o.model, inTeam: true });
      const p = await createPlus(team.ownerKey, { id: plusId, title: o.plus, isPublic: 'true' }, `The ${o.plus} say the secret animal is the ${o.secret}.\n`);
      expect(p.response.status).toBe(200);
      expect(p.data).toMatchObject({ id: plusId, title: o.plus });
      const w = await api.POST('/api/v1/workspaces/{workspaceId}', {
        ...path({ workspaceId: wsId }),
        body: { name: o.ws, modelIds: [modelId], plusIds: [plusId] },
      });
      expect(w.response.status).toBe(200);
      expect(w.data).toMatchObject({ id: wsId, name: o.ws, plusIds: [plusId], models: [{ modelId, modelName: o.model }] });
    }
  });

  it('reads and lists each team’s own, never the other’s', async () => {
    for (const [team, o] of [
      [a, own.a],
      [b, own.b],
    ] as const) {
      const api = t.api(team.ownerKey);
      expect((await api.GET('/api/v1/models/{modelId}', path({ modelId }))).data).toMatchObject({ name: o.model });
      expect((await api.GET('/api/v1/workspaces/{workspaceId}', path({ workspaceId: wsId }))).data).toMatchObject({
        name: o.ws,
        models: [{ modelName: o.model }],
      });
      const entry = (await api.GET('/api/v1/plus/{plusId}', path({ plusId }))).data;
      expect(entry?.title).toBe(o.plus);
      expect(entry?.files).toHaveLength(1);
      const models = (await api.GET('/api/v1/models')).data ?? [];
      expect(models.filter((m) => m.id === modelId).map((m) => m.name)).toEqual([o.model]);
      const workspaces = (await api.GET('/api/v1/workspaces')).data ?? [];
      expect(workspaces.filter((w) => w.id === wsId).map((w) => w.name)).toEqual([o.ws]);
      const entries = (await api.GET('/api/v1/plus')).data ?? [];
      expect(entries.filter((e) => e.id === plusId).map((e) => e.title)).toEqual([o.plus]);
      const context = await api.POST('/api/v1/plus/{plusId}/context-for-prompt', {
        ...path({ plusId }),
        body: { content: 'Which is the secret animal?', explain: false },
      });
      expect(context.response.status).toBe(200);
      expect(context.data?.content).toContain(o.secret);
      expect(context.data?.content).not.toContain(o === own.a ? own.b.secret : own.a.secret);
    }
  });

  it('updates one team’s without touching the other’s', async () => {
    const [apiA, apiB] = [t.api(a.ownerKey), t.api(b.ownerKey)];
    const m = await apiB.PATCH('/api/v1/models/{modelId}', { ...path({ modelId }), body: { name: 'Beta model v2' } });
    expect(m.response.status).toBe(200);
    own.b.model = 'Beta model v2';
    const w = await apiB.PATCH('/api/v1/workspaces/{workspaceId}', { ...path({ workspaceId: wsId }), body: { name: 'Beta workspace v2' } });
    expect(w.response.status).toBe(200);
    own.b.ws = 'Beta workspace v2';
    const s = await apiB.POST('/api/v1/workspaces/{workspaceId}/{modelId}', { ...path({ workspaceId: wsId, modelId }), body: { temperature: 0.25 } });
    expect(s.response.status).toBe(200);
    expect(s.data).toMatchObject({ workspaceId: wsId, modelId, modelName: 'Beta model v2', temperature: 0.25 });

    const wa = (await apiA.GET('/api/v1/workspaces/{workspaceId}', path({ workspaceId: wsId }))).data;
    expect(wa).toMatchObject({ name: 'Alpha workspace', models: [{ modelId, modelName: 'Alpha model', temperature: null }] });
    expect((await apiA.GET('/api/v1/models/{modelId}', path({ modelId }))).data).toMatchObject({ name: 'Alpha model' });
    const wb = (await apiB.GET('/api/v1/workspaces/{workspaceId}', path({ workspaceId: wsId }))).data;
    expect(wb).toMatchObject({ name: 'Beta workspace v2', models: [{ modelId, modelName: 'Beta model v2', temperature: 0.25 }] });
  });

  it('chats in each team’s workspace with its own model and entry: sources, history, search, export and prompt logs', async () => {
    const threads: Record<string, string> = {};
    for (const [team, o, other] of [
      [a, own.a, own.b],
      [b, own.b, own.a],
    ] as const) {
      const res = await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/completions', { ...path({ workspaceId: wsId }), body: { prompt: o.prompt } });
      expect(res.response.status).toBe(200);
      const turn = expectStatus(res, 200);
      expect(turn.modelId).toBe(modelId);
      expect(turn.sources.length).toBeGreaterThan(0);
      for (const s of turn.sources) expect(s).toMatchObject({ plusId });
      expect(turn.sources.map((s) => s.excerpt).join(' ')).toContain(o.secret);
      expect(turn.sources.map((s) => s.excerpt).join(' ')).not.toContain(other.secret);
      threads[o.ws] = turn.threadId;
    }
    for (const [team, o, other] of [
      [a, own.a, own.b],
      [b, own.b, own.a],
    ] as const) {
      const api = t.api(team.ownerKey);
      const history = (await api.GET('/api/v1/chat/{workspaceId}/history', path({ workspaceId: wsId }))).data ?? [];
      expect(history.map((h) => h.id)).toEqual([threads[o.ws]]);
      expectProblem(await api.GET('/api/v1/chat/{workspaceId}/history/{threadId}', path({ workspaceId: wsId, threadId: threads[other.ws]! })), 404);
      const exported = await api.GET('/api/v1/chat/{workspaceId}/history/{threadId}/export', {
        params: { path: { workspaceId: wsId, threadId: threads[o.ws]! }, query: { format: 'json' } },
        parseAs: 'json',
      });
      const messages = (exported.data as { messages: Array<{ role: string }> }).messages;
      expect(messages.find((m) => m.role === 'assistant')).toMatchObject({ modelId, modelName: o.model });
      const hits = (await api.GET('/api/v1/chat/search', { params: { query: { q: 'question' } } })).data?.content ?? [];
      expect(hits.map((h) => h.threadId)).toEqual([threads[o.ws]]);
      const inWs = (await api.GET('/api/v1/chat/search', { params: { query: { q: 'question', workspaceId: wsId } } })).data?.content ?? [];
      expect(inWs.map((h) => h.threadId)).toEqual([threads[o.ws]]);
      const range = { startDate: '2000-01-01T00:00:00Z', endDate: '2100-01-01T00:00:00Z' };
      const logs = (await api.GET('/api/v1/chat/prompt-logs', { params: { query: range } })).data ?? [];
      expect(logs.map((l) => [l.workspaceId, l.modelId, l.modelName])).toEqual([[wsId, modelId, o.model]]);
      expect(logs.map((l) => l.prompt).join(' ')).toContain(o.secret);
      expect(logs.map((l) => l.prompt).join(' ')).not.toContain(other.secret);
    }
  });

  it('deletes one team’s without touching the other’s', async () => {
    const [apiA, apiB] = [t.api(a.ownerKey), t.api(b.ownerKey)];
    expect((await apiB.DELETE('/api/v1/plus/{plusId}', path({ plusId }))).response.status).toBe(200);
    expect((await apiB.DELETE('/api/v1/workspaces/{workspaceId}', path({ workspaceId: wsId }))).response.status).toBe(200);
    expectProblem(await apiB.GET('/api/v1/plus/{plusId}', path({ plusId })), 404);
    expectProblem(await apiB.GET('/api/v1/workspaces/{workspaceId}', path({ workspaceId: wsId })), 404);
    expect((await apiB.GET('/api/v1/chat/search', { params: { query: { q: 'question' } } })).data?.content).toEqual([]);

    const entry = (await apiA.GET('/api/v1/plus/{plusId}', path({ plusId }))).data;
    expect(entry).toMatchObject({ title: 'Alpha notes' });
    expect(entry?.files).toHaveLength(1);
    expect((await apiA.GET('/api/v1/workspaces/{workspaceId}', path({ workspaceId: wsId }))).data).toMatchObject({
      name: 'Alpha workspace',
      plusIds: [plusId],
    });
    expect((await apiA.GET('/api/v1/chat/{workspaceId}/history', path({ workspaceId: wsId }))).data).toHaveLength(1);
    const again = await apiA.POST('/api/v1/chat/{workspaceId}/completions', { ...path({ workspaceId: wsId }), body: { prompt: 'alpha again' } });
    expect(again.response.status).toBe(200);
    expect(
      expectStatus(again, 200)
        .sources.map((s) => s.excerpt)
        .join(' '),
    ).toContain('aardvark');
  });
});

describe('an id taken in the caller’s own team', () => {
  it('stays a 409 for a workspace, a model and a teammate’s private Plus entry', async () => {
    const team = await newTeam(t);
    const id = randomUUID();
    const api = t.api(team.ownerKey);
    expect((await api.POST('/api/v1/workspaces/{workspaceId}', { ...path({ workspaceId: id }), body: { name: 'first' } })).response.status).toBe(200);
    expectProblem(await api.POST('/api/v1/workspaces/{workspaceId}', { ...path({ workspaceId: id }), body: { name: 'again' } }), 409);
    await createModel(t, team.ownerKey, { id });
    expectProblem(await api.POST('/api/v1/models', { body: modelBody(id, 'again') }), 409);
    const member = await team.addUser('member');
    expect((await createPlus(member.key, { id, title: 'private', isPublic: 'false' })).response.status).toBe(200);
    const other = await team.addUser('member');
    expectProblem(await createPlus(other.key, { id, title: 'take it' }), 409);
  });

  it('a team model may not take a system model’s id (every team sees system models), nor a system model a team’s', async () => {
    const team = await newTeam(t);
    const sys = await createModel(t, ADMIN_KEY, { name: 'system one' }, { system: true });
    expectProblem(await t.api(team.ownerKey).POST('/api/v1/models', { body: modelBody(sys.id, 'mine') }), 409);
    const mine = await createModel(t, team.ownerKey, { name: 'mine' });
    expectProblem(await t.api(ADMIN_KEY).POST('/api/v1/models', { params: { query: { system: true } }, body: modelBody(mine.id, 'system two') }), 409);
  });
});
