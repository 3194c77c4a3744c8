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
import { multipart } from '../helpers/multipart.js';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';

let t: TestApp;
let standIn: StandInProvider;
let a: TeamFixture;
let b: TeamFixture;

beforeAll(async () => {
  standIn = await startStandInProvider();
  t = await startTestApp();
  a = await newTeam(t);
  b = await newTeam(t);
});
afterAll(async () => {
  await t.close();
  await standIn.close();
});

function createPlus(key: string, fields: Record<string, string>, text?: string) {
  const parts = [
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    ...(text ? [{ name: 'files', filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from(text) }] : []),
  ];
  return t.request({ method: 'POST', url: '/api/v1/plus', key, ...multipart(parts) });
}

const modelBody = (id: string, name: string) => ({ id, name, apiBase: 'OPENAI', url: standIn.openaiBaseUrl, baseModel: 'gpt-test', contextWindow: 8192 });
const get = (key: string, url: string) => t.request({ method: 'GET', url, key });

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
      const m = await t.request({ method: 'POST', url: '/api/v1/models', key: team.ownerKey, payload: modelBody(modelId, o.model) });
      expect(m.statusCode).toBe(200);
      expect(m.json()).toMatchObject({ id: modelId, name: o.model, inTeam: true });
      const p = await createPlus(team.ownerKey, { id: plusId, title: o.plus, isPublic: 'true' }, `The ${o.plus} say the secret animal is the ${o.secret}.\n`);
      expect(p.statusCode).toBe(200);
      expect(p.json()).toMatchObject({ id: plusId, title: o.plus });
      const w = await t.request({
        method: 'POST',
        url: `/api/v1/workspaces/${wsId}`,
        key: team.ownerKey,
        payload: { name: o.ws, modelIds: [modelId], plusIds: [plusId] },
      });
      expect(w.statusCode).toBe(200);
      expect(w.json()).toMatchObject({ id: wsId, name: o.ws, plusIds: [plusId], models: [{ modelId, modelName: o.model }] });
    }
  });

  it('reads and lists each team’s own, never the other’s', async () => {
    for (const [team, o] of [
      [a, own.a],
      [b, own.b],
    ] as const) {
      expect((await get(team.ownerKey, `/api/v1/models/${modelId}`)).json()).toMatchObject({ name: o.model });
      expect((await get(team.ownerKey, `/api/v1/workspaces/${wsId}`)).json()).toMatchObject({ name: o.ws, models: [{ modelName: o.model }] });
      const entry = (await get(team.ownerKey, `/api/v1/plus/${plusId}`)).json();
      expect(entry.title).toBe(o.plus);
      expect(entry.files).toHaveLength(1);
      const models = (await get(team.ownerKey, '/api/v1/models')).json() as Array<{ id: string; name: string }>;
      expect(models.filter((m) => m.id === modelId).map((m) => m.name)).toEqual([o.model]);
      const workspaces = (await get(team.ownerKey, '/api/v1/workspaces')).json() as Array<{ id: string; name: string }>;
      expect(workspaces.filter((w) => w.id === wsId).map((w) => w.name)).toEqual([o.ws]);
      const entries = (await get(team.ownerKey, '/api/v1/plus')).json() as Array<{ id: string; title: string }>;
      expect(entries.filter((e) => e.id === plusId).map((e) => e.title)).toEqual([o.plus]);
      const context = await t.request({
        method: 'POST',
        url: `/api/v1/plus/${plusId}/context-for-prompt`,
        key: team.ownerKey,
        payload: { content: 'Which is the secret animal?' },
      });
      expect(context.statusCode).toBe(200);
      expect(context.json().content).toContain(o.secret);
      expect(context.json().content).not.toContain(o === own.a ? own.b.secret : own.a.secret);
    }
  });

  it('updates one team’s without touching the other’s', async () => {
    const m = await t.request({ method: 'PATCH', url: `/api/v1/models/${modelId}`, key: b.ownerKey, payload: { name: 'Beta model v2' } });
    expect(m.statusCode).toBe(200);
    own.b.model = 'Beta model v2';
    const w = await t.request({ method: 'PATCH', url: `/api/v1/workspaces/${wsId}`, key: b.ownerKey, payload: { name: 'Beta workspace v2' } });
    expect(w.statusCode).toBe(200);
    own.b.ws = 'Beta workspace v2';
    const s = await t.request({ method: 'POST', url: `/api/v1/workspaces/${wsId}/${modelId}`, key: b.ownerKey, payload: { temperature: 0.25 } });
    expect(s.statusCode).toBe(200);
    expect(s.json()).toMatchObject({ workspaceId: wsId, modelId, modelName: 'Beta model v2', temperature: 0.25 });

    const wa = (await get(a.ownerKey, `/api/v1/workspaces/${wsId}`)).json();
    expect(wa).toMatchObject({ name: 'Alpha workspace', models: [{ modelId, modelName: 'Alpha model', temperature: null }] });
    expect((await get(a.ownerKey, `/api/v1/models/${modelId}`)).json()).toMatchObject({ name: 'Alpha model' });
    const wb = (await get(b.ownerKey, `/api/v1/workspaces/${wsId}`)).json();
    expect(wb).toMatchObject({ name: 'Beta workspace v2', models: [{ modelId, modelName: 'Beta model v2', temperature: 0.25 }] });
  });

  it('chats in each team’s workspace with its own model and entry: sources, history, search, export and prompt logs', async () => {
    const threads: Record<string, string> = {};
    for (const [team, o, other] of [
      [a, own.a, own.b],
      [b, own.b, own.a],
    ] as const) {
      const res = await t.request({ method: 'POST', url: `/api/v1/chat/${wsId}/completions`, key: team.ownerKey, payload: { prompt: o.prompt } });
      expect(res.statusCode).toBe(200);
      const turn = res.json();
      expect(turn.modelId).toBe(modelId);
      expect(turn.sources.length).toBeGreaterThan(0);
      for (const s of turn.sources) expect(s).toMatchObject({ plusId });
      expect(turn.sources.map((s: { excerpt: string }) => s.excerpt).join(' ')).toContain(o.secret);
      expect(turn.sources.map((s: { excerpt: string }) => s.excerpt).join(' ')).not.toContain(other.secret);
      threads[o.ws] = turn.threadId;
    }
    for (const [team, o, other] of [
      [a, own.a, own.b],
      [b, own.b, own.a],
    ] as const) {
      const history = (await get(team.ownerKey, `/api/v1/chat/${wsId}/history`)).json() as Array<{ id: string; title: string }>;
      expect(history.map((h) => h.id)).toEqual([threads[o.ws]]);
      expectProblem(await get(team.ownerKey, `/api/v1/chat/${wsId}/history/${threads[other.ws]}`), 404);
      const exported = (await get(team.ownerKey, `/api/v1/chat/${wsId}/history/${threads[o.ws]}/export?format=json`)).json();
      expect(exported.messages.find((m: { role: string }) => m.role === 'assistant')).toMatchObject({ modelId, modelName: o.model });
      const hits = (await get(team.ownerKey, `/api/v1/chat/search?q=question`)).json().content as Array<{ threadId: string }>;
      expect(hits.map((h) => h.threadId)).toEqual([threads[o.ws]]);
      const inWs = (await get(team.ownerKey, `/api/v1/chat/search?q=question&workspaceId=${wsId}`)).json().content as Array<{ threadId: string }>;
      expect(inWs.map((h) => h.threadId)).toEqual([threads[o.ws]]);
      const range = 'startDate=2000-01-01T00:00:00Z&endDate=2100-01-01T00:00:00Z';
      const logs = (await get(team.ownerKey, `/api/v1/chat/prompt-logs?${range}`)).json() as Array<{
        prompt: string;
        workspaceId: string;
        modelId: string;
        modelName: string;
      }>;
      expect(logs.map((l) => [l.workspaceId, l.modelId, l.modelName])).toEqual([[wsId, modelId, o.model]]);
      expect(logs.map((l) => l.prompt).join(' ')).toContain(o.secret);
      expect(logs.map((l) => l.prompt).join(' ')).not.toContain(other.secret);
    }
  });

  it('deletes one team’s without touching the other’s', async () => {
    expect((await t.request({ method: 'DELETE', url: `/api/v1/plus/${plusId}`, key: b.ownerKey })).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/workspaces/${wsId}`, key: b.ownerKey })).statusCode).toBe(200);
    expectProblem(await get(b.ownerKey, `/api/v1/plus/${plusId}`), 404);
    expectProblem(await get(b.ownerKey, `/api/v1/workspaces/${wsId}`), 404);
    expect((await get(b.ownerKey, `/api/v1/chat/search?q=question`)).json().content).toEqual([]);

    const entry = (await get(a.ownerKey, `/api/v1/plus/${plusId}`)).json();
    expect(entry).toMatchObject({ title: 'Alpha notes' });
    expect(entry.files).toHaveLength(1);
    expect((await get(a.ownerKey, `/api/v1/workspaces/${wsId}`)).json()).toMatchObject({ name: 'Alpha workspace', plusIds: [plusId] });
    expect((await get(a.ownerKey, `/api/v1/chat/${wsId}/history`)).json()).toHaveLength(1);
    const again = await t.request({ method: 'POST', url: `/api/v1/chat/${wsId}/completions`, key: a.ownerKey, payload: { prompt: 'alpha again' } });
    expect(again.statusCode).toBe(200);
    expect(
      again
        .json()
        .sources.map((s: { excerpt: string }) => s.excerpt)
        .join(' '),
    ).toContain('aardvark');
  });
});

describe('an id taken in the caller’s own team', () => {
  it('stays a 409 for a workspace, a model and a teammate’s private Plus entry', async () => {
    const team = await newTeam(t);
    const id = randomUUID();
    expect((await t.request({ method: 'POST', url: `/api/v1/workspaces/${id}`, key: team.ownerKey, payload: { name: 'first' } })).statusCode).toBe(200);
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/workspaces/${id}`, key: team.ownerKey, payload: { name: 'again' } }), 409);
    await createModel(t, team.ownerKey, { id });
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models', key: team.ownerKey, payload: modelBody(id, 'again') }), 409);
    const member = await team.addUser('member');
    expect((await createPlus(member.key, { id, title: 'private', isPublic: 'false' })).statusCode).toBe(200);
    const other = await team.addUser('member');
    expectProblem(await createPlus(other.key, { id, title: 'take it' }), 409);
  });

  it('a team model may not take a system model’s id (every team sees system models), nor a system model a team’s', async () => {
    const team = await newTeam(t);
    const sys = await createModel(t, ADMIN_KEY, { name: 'system one' }, { system: true });
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models', key: team.ownerKey, payload: modelBody(sys.id, 'mine') }), 409);
    const mine = await createModel(t, team.ownerKey, { name: 'mine' });
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models?system=true', key: ADMIN_KEY, payload: modelBody(mine.id, 'system two') }), 409);
  });
});
