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

describe('workspaces', () => {
  it('creates with a client id or without, with models in order and defaults', async () => {
    const a = await newTeam(t);
    const m1 = await createModel(t, a.ownerKey);
    const m2 = await createModel(t, a.ownerKey);
    const id = randomUUID();
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/workspaces/${id}`,
      key: a.ownerKey,
      payload: { name: 'Research', modelIds: [m2.id, m1.id], chatHistoryType: 'USER', contextType: 'PRIVATE', sharingType: 'TEAM' },
    });
    expect(res.statusCode).toBe(200);
    const ws = expectShape(Workspace, res.json());
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
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/workspaces/${id}`, key: a.ownerKey, payload: { name: 'again' } }), 409);
  });

  it('answers concurrent creates of one id with one 200 and 409s, never a 500', async () => {
    const a = await newTeam(t);
    const id = randomUUID();
    const res = await Promise.all(
      Array.from({ length: 6 }, () => t.request({ method: 'POST', url: `/api/v1/workspaces/${id}`, key: a.ownerKey, payload: { name: 'race' } })),
    );
    const codes = res.map((r) => r.statusCode).sort();
    expect(codes).toEqual([200, 409, 409, 409, 409, 409]);
  });

  it('upserts a workspace model and validates every range', async () => {
    const a = await newTeam(t);
    const m = await createModel(t, a.ownerKey, { contextWindow: 4096 });
    const other = await createModel(t, a.ownerKey);
    const ws = await createWorkspace(t, a.ownerKey, { modelIds: [m.id] });
    const ok = await t.request({
      method: 'POST',
      url: `/api/v1/workspaces/${ws.id}/${m.id}`,
      key: a.ownerKey,
      payload: {
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
    expect(ok.statusCode).toBe(200);
    expect(expectShape(WorkspaceModel, ok.json())).toMatchObject({
      workspaceId: ws.id,
      modelId: m.id,
      systemInstructions: 'Be brief.',
      temperature: 0.3,
      maxTokens: 512,
      n: 2,
      logitBias: { '50256': -100 },
    });
    // partial update keeps the rest
    const partial = await t.request({ method: 'POST', url: `/api/v1/workspaces/${ws.id}/${m.id}`, key: a.ownerKey, payload: { temperature: 1 } });
    expect(partial.json()).toMatchObject({ temperature: 1, systemInstructions: 'Be brief.' });
    // a model not yet in the workspace is added
    const added = await t.request({ method: 'POST', url: `/api/v1/workspaces/${ws.id}/${other.id}`, key: a.ownerKey, payload: {} });
    expect(added.statusCode).toBe(200);
    const got = await t.request({ method: 'GET', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey });
    expect(got.json().models.map((x: { modelId: string }) => x.modelId)).toEqual([m.id, other.id]);

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
      expectProblem(await t.request({ method: 'POST', url: `/api/v1/workspaces/${ws.id}/${m.id}`, key: a.ownerKey, payload }), 400);
    }
    const after = await t.request({ method: 'GET', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey });
    expect(after.json().models[0]).toMatchObject({ temperature: 1, maxTokens: 512 });
  });

  it('rejects models the team does not use', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const foreign = await createModel(t, b.ownerKey);
    const p = expectProblem(
      await t.request({ method: 'POST', url: '/api/v1/workspaces', key: a.ownerKey, payload: { name: 'x', modelIds: [foreign.id] } }),
      400,
    );
    expect(p.code).toBe('unknown_model');
    const ws = await createWorkspace(t, a.ownerKey);
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/workspaces/${ws.id}/${foreign.id}`, key: a.ownerKey, payload: {} }), 404);
  });

  it('renames and changes settings with PATCH', async () => {
    const a = await newTeam(t);
    const ws = await createWorkspace(t, a.ownerKey, { name: 'Old' });
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/workspaces/${ws.id}`,
      key: a.ownerKey,
      payload: { name: 'New', greeting: 'Hi!', samplePrompts: ['a', 'b'], sharingType: 'PRIVATE' },
    });
    expect(res.json()).toMatchObject({ name: 'New', greeting: 'Hi!', samplePrompts: ['a', 'b'], sharingType: 'PRIVATE' });
    expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey, payload: {} }), 400);
    expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey, payload: { sharingType: 'WORLD' } }), 400);
  });

  it('PRIVATE workspaces are seen only by their creator; TEAM ones by the team', async () => {
    const a = await newTeam(t);
    const member = await a.addUser('member');
    const other = await a.addUser('member');
    const priv = await createWorkspace(t, member.key, { sharingType: 'PRIVATE' });
    const shared = await createWorkspace(t, member.key, { sharingType: 'TEAM' });
    const ids = async (key: string) =>
      expectShape(Type.Array(Workspace), (await t.request({ method: 'GET', url: '/api/v1/workspaces', key })).json()).map((w) => w.id);
    expect(await ids(member.key)).toEqual(expect.arrayContaining([priv.id, shared.id]));
    expect(await ids(other.key)).toContain(shared.id);
    expect(await ids(other.key)).not.toContain(priv.id);
    expect(await ids(a.ownerKey)).not.toContain(priv.id);
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/workspaces/${priv.id}`, key: other.key }), 404);
    expectProblem(await t.request({ method: 'DELETE', url: `/api/v1/workspaces/${priv.id}`, key: a.ownerKey }), 404);
    // a member who did not create a TEAM workspace may use it but not change or delete it
    expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/workspaces/${shared.id}`, key: other.key, payload: { name: 'x' } }), 403);
    expectProblem(await t.request({ method: 'DELETE', url: `/api/v1/workspaces/${shared.id}`, key: other.key }), 403);
  });

  it('another team gets 404 on every workspace route', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const m = await createModel(t, a.ownerKey);
    const ws = await createWorkspace(t, a.ownerKey, { modelIds: [m.id] });
    const base = `/api/v1/workspaces/${ws.id}`;
    expectProblem(await t.request({ method: 'GET', url: base, key: b.ownerKey }), 404);
    expectProblem(await t.request({ method: 'PATCH', url: base, key: b.ownerKey, payload: { name: 'x' } }), 404);
    expectProblem(await t.request({ method: 'DELETE', url: base, key: b.ownerKey }), 404);
    expectProblem(await t.request({ method: 'POST', url: `${base}/${m.id}`, key: b.ownerKey, payload: { temperature: 1 } }), 404);
    expect((await t.request({ method: 'GET', url: '/api/v1/workspaces', key: b.ownerKey })).body).not.toContain(ws.id);
  });

  it('deletes a workspace', async () => {
    const a = await newTeam(t);
    const ws = await createWorkspace(t, a.ownerKey);
    const res = await t.request({ method: 'DELETE', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey });
    expect(res.json()).toEqual({ deleted: true });
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey }), 404);
    expectProblem(await t.request({ method: 'DELETE', url: '/api/v1/workspaces/123', key: a.ownerKey }), 400);
  });
});
