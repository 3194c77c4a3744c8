import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace, WorkspaceModel } from '../../src/modules/workspaces/schema.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const at = <P>(p: P) => ({ params: { path: p } });

describe('workspaces', () => {
  it('creates with a client id or without, with models in order and defaults', async () => {
    const a = await newTeam(t);
    const m1 = await createModel(t, a.ownerKey);
    const m2 = await createModel(t, a.ownerKey);
    const id = randomUUID();
    const api = t.api(a.ownerKey);
    const res = await api.POST('/api/v1/workspaces/{workspaceId}', {
      ...at({ workspaceId: id }),
      body: { name: 'Research', modelIds: [m2.id, m1.id], chatHistoryType: 'USER', contextType: 'PRIVATE', sharingType: 'TEAM' },
    });
    expect(res.response.status).toBe(200);
    const ws = expectShape(Workspace, res.data);
    expect(ws).toMatchObject({
      id,
      name: 'Research',
      chatHistoryType: 'USER',
      contextType: 'PRIVATE',
      sharingType: 'TEAM',
      userId: a.ownerId,
      samplePrompts: [],
      greeting: null,
    });
    expect(ws.models.map((m) => (m as { modelId: string }).modelId)).toEqual([m2.id, m1.id]);
    expect(ws.models[0]).toMatchObject({ workspaceId: id, modelName: m2.name, temperature: null });

    const noId = await createWorkspace(t, a.ownerKey, { name: 'Plain' });
    expect(noId).toMatchObject({ chatHistoryType: 'TEAM', contextType: 'SHARED', sharingType: 'TEAM', models: [] });
    expectProblem(await api.POST('/api/v1/workspaces/{workspaceId}', { ...at({ workspaceId: id }), body: { name: 'again' } }), 409);
  });

  it('answers concurrent creates of one id with one 200 and 409s, never a 500', async () => {
    const a = await newTeam(t);
    const id = randomUUID();
    const res = await Promise.all(
      Array.from({ length: 6 }, () => t.api(a.ownerKey).POST('/api/v1/workspaces/{workspaceId}', { ...at({ workspaceId: id }), body: { name: 'race' } })),
    );
    const codes = res.map((r) => r.response.status).sort();
    expect(codes).toEqual([200, 409, 409, 409, 409, 409]);
  });

  it('upserts a workspace model and validates every range', async () => {
    const a = await newTeam(t);
    const m = await createModel(t, a.ownerKey, { contextWindow: 4096 });
    const other = await createModel(t, a.ownerKey);
    const ws = await createWorkspace(t, a.ownerKey, { modelIds: [m.id] });
    const api = t.api(a.ownerKey);
    const ok = await api.POST('/api/v1/workspaces/{workspaceId}/{modelId}', {
      ...at({ workspaceId: ws.id, modelId: m.id }),
      body: {
        systemInstructions: 'Be brief.',
        addedContext: 'ctx',
        temperature: 0.3,
        maxTokens: 512,
        topP: 0.9,
        n: 2,
        frequencyPenalty: -1,
        presencePenalty: 1.5,
        logitBias: { '50256': -100 },
      },
    });
    expect(ok.response.status).toBe(200);
    expect(expectShape(WorkspaceModel, ok.data)).toMatchObject({
      workspaceId: ws.id,
      modelId: m.id,
      systemInstructions: 'Be brief.',
      temperature: 0.3,
      maxTokens: 512,
      n: 2,
      logitBias: { '50256': -100 },
    });
    // partial update keeps the rest
    const partial = await api.POST('/api/v1/workspaces/{workspaceId}/{modelId}', { ...at({ workspaceId: ws.id, modelId: m.id }), body: { temperature: 1 } });
    expect(partial.data).toMatchObject({ temperature: 1, systemInstructions: 'Be brief.' });
    // a model not yet in the workspace is added
    const added = await api.POST('/api/v1/workspaces/{workspaceId}/{modelId}', { ...at({ workspaceId: ws.id, modelId: other.id }), body: {} });
    expect(added.response.status).toBe(200);
    const got = await api.GET('/api/v1/workspaces/{workspaceId}', at({ workspaceId: ws.id }));
    expect(got.data?.models.map((x) => x.modelId)).toEqual([m.id, other.id]);

    const bad: Array<Record<string, unknown>> = [
      { temperature: 2.5 },
      { temperature: -0.1 },
      { topP: 1.2 },
      { n: 0 },
      { n: 9 },
      { frequencyPenalty: -3 },
      { presencePenalty: 2.1 },
      { maxTokens: 0 },
      { maxTokens: 5000 },
      { logitBias: { '1': 101 } },
      { logitBias: { abc: 1 } },
      { temperature: '0.5' },
      { bogus: true },
    ];
    for (const payload of bad) {
      // raw: bodies out of the document's ranges and types
      expectProblem(await t.request({ method: 'POST', url: `/api/v1/workspaces/${ws.id}/${m.id}`, key: a.ownerKey, payload }), 400);
    }
    const after = await api.GET('/api/v1/workspaces/{workspaceId}', at({ workspaceId: ws.id }));
    expect(after.data?.models[0]).toMatchObject({ temperature: 1, maxTokens: 512 });
  });

  it('rejects models the team does not use', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const foreign = await createModel(t, b.ownerKey);
    const p = expectProblem(await t.api(a.ownerKey).POST('/api/v1/workspaces', { body: { name: 'x', modelIds: [foreign.id] } }), 400);
    expect(p.code).toBe('unknown_model');
    const ws = await createWorkspace(t, a.ownerKey);
    expectProblem(
      await t.api(a.ownerKey).POST('/api/v1/workspaces/{workspaceId}/{modelId}', { ...at({ workspaceId: ws.id, modelId: foreign.id }), body: {} }),
      404,
    );
  });

  it('renames and changes settings with PATCH', async () => {
    const a = await newTeam(t);
    const ws = await createWorkspace(t, a.ownerKey, { name: 'Old' });
    const api = t.api(a.ownerKey);
    const res = await api.PATCH('/api/v1/workspaces/{workspaceId}', {
      ...at({ workspaceId: ws.id }),
      body: { name: 'New', greeting: 'Hi!', samplePrompts: ['a', 'b'], sharingType: 'PRIVATE' },
    });
    expect(res.data).toMatchObject({ name: 'New', greeting: 'Hi!', samplePrompts: ['a', 'b'], sharingType: 'PRIVATE' });
    expectProblem(await api.PATCH('/api/v1/workspaces/{workspaceId}', { ...at({ workspaceId: ws.id }), body: {} }), 400);
    // raw: a sharingType the document does not have
    expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey, payload: { sharingType: 'WORLD' } }), 400);
  });

  it('PRIVATE workspaces are seen only by their creator; TEAM ones by the team', async () => {
    const a = await newTeam(t);
    const member = await a.addUser('member');
    const other = await a.addUser('member');
    const priv = await createWorkspace(t, member.key, { sharingType: 'PRIVATE' });
    const shared = await createWorkspace(t, member.key, { sharingType: 'TEAM' });
    const ids = async (key: string) => expectShape(Type.Array(Workspace), (await t.api(key).GET('/api/v1/workspaces')).data).map((w) => w.id);
    expect(await ids(member.key)).toEqual(expect.arrayContaining([priv.id, shared.id]));
    expect(await ids(other.key)).toContain(shared.id);
    expect(await ids(other.key)).not.toContain(priv.id);
    expect(await ids(a.ownerKey)).not.toContain(priv.id);
    expectProblem(await t.api(other.key).GET('/api/v1/workspaces/{workspaceId}', at({ workspaceId: priv.id })), 404);
    expectProblem(await t.api(a.ownerKey).DELETE('/api/v1/workspaces/{workspaceId}', at({ workspaceId: priv.id })), 404);
    // a member who did not create a TEAM workspace may use it but not change or delete it
    expectProblem(await t.api(other.key).PATCH('/api/v1/workspaces/{workspaceId}', { ...at({ workspaceId: shared.id }), body: { name: 'x' } }), 403);
    expectProblem(await t.api(other.key).DELETE('/api/v1/workspaces/{workspaceId}', at({ workspaceId: shared.id })), 403);
  });

  it('another team gets 404 on every workspace route', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const m = await createModel(t, a.ownerKey);
    const ws = await createWorkspace(t, a.ownerKey, { modelIds: [m.id] });
    const api = t.api(b.ownerKey);
    const base = at({ workspaceId: ws.id });
    expectProblem(await api.GET('/api/v1/workspaces/{workspaceId}', base), 404);
    expectProblem(await api.PATCH('/api/v1/workspaces/{workspaceId}', { ...base, body: { name: 'x' } }), 404);
    expectProblem(await api.DELETE('/api/v1/workspaces/{workspaceId}', base), 404);
    expectProblem(
      await api.POST('/api/v1/workspaces/{workspaceId}/{modelId}', { ...at({ workspaceId: ws.id, modelId: m.id }), body: { temperature: 1 } }),
      404,
    );
    const list = await api.GET('/api/v1/workspaces', { parseAs: 'text' });
    expect(list.response.status).toBe(200);
    expect(list.data).not.toContain(ws.id);
  });

  it('deletes a workspace', async () => {
    const a = await newTeam(t);
    const ws = await createWorkspace(t, a.ownerKey);
    const api = t.api(a.ownerKey);
    const res = await api.DELETE('/api/v1/workspaces/{workspaceId}', at({ workspaceId: ws.id }));
    expect(res.data).toEqual({ deleted: true });
    expectProblem(await api.GET('/api/v1/workspaces/{workspaceId}', at({ workspaceId: ws.id })), 404);
    expectProblem(await api.DELETE('/api/v1/workspaces/{workspaceId}', at({ workspaceId: '123' })), 400);
  });
});
