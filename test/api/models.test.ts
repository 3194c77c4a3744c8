import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Model } from '../../src/modules/models/schema.js';
import { ADMIN_KEY, expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const at = (modelId: string) => ({ params: { path: { modelId } } });

describe('team models', () => {
  it('creates a model wrapped or bare, with the seed enum aliases, and never returns the key', async () => {
    const a = await newTeam(t);
    const secret = 'sk-super-secret-value-1234';
    const api = t.api(a.ownerKey);
    const wrapped = await t.request({
      method: 'POST',
      url: '/api/v1/models', // raw: the {modelRequest} wrapper, which the document names only in the summary
      key: a.ownerKey,
      payload: {
        modelRequest: {
          name: 'Claude',
          apiBase: 'VENDOR_B',
          connectionType: 'URL',
          apiKey: secret,
          baseModel: 'claude-x',
          contextWindow: 200000,
          modelRating: 4,
        },
      },
    });
    expect(wrapped.statusCode).toBe(200);
    const m = expectShape(Model, wrapped.json());
    expect(m).toMatchObject({ name: 'Claude', apiBase: 'ANTHROPIC', connectionType: 'URL', apiKey: '••••1234', inTeam: true, system: false, active: true });
    expect(wrapped.body).not.toContain(secret);

    const bare = await createModel(t, a.ownerKey, { name: 'Azure', connectionType: 'CLOUD_PROVIDER_A', apiBase: 'VENDOR_A' });
    expect(bare).toMatchObject({ connectionType: 'AZURE', apiBase: 'OPENAI', apiKey: null });

    const got = await api.GET('/api/v1/models/{modelId}', { ...at(m.id), parseAs: 'text' });
    expect(expectShape(Model, JSON.parse(got.data ?? 'null')).apiKey).toBe('••••1234');
    expect(got.data).not.toContain(secret);
  });

  it('masks short keys without any of their characters, longer ones with their last four', async () => {
    const a = await newTeam(t);
    const cases: Array<[string, string]> = [
      ['x', '••••'],
      ['abcd', '••••'],
      ['ollama', '••••'],
      ['sk-12345678', '••••'], // 11 characters
      ['sk-123456789', '••••6789'], // 12: the last four are a third of it
    ];
    for (const [key, mask] of cases) {
      const m = await createModel(t, a.ownerKey, { apiKey: key });
      expect(m.apiKey).toBe(mask);
      const listed = await t.api(a.ownerKey).GET('/api/v1/models');
      expect(listed.data?.find((x) => x.id === m.id)?.apiKey).toBe(mask);
      const patched = await t.api(a.ownerKey).PATCH('/api/v1/models/{modelId}', { ...at(m.id), body: { apiKey: key } });
      expect(patched.data?.apiKey).toBe(mask);
    }
  });

  it('encrypts provider keys at rest', async () => {
    const a = await newTeam(t);
    const secret = 'sk-at-rest-check-abcdef';
    const m = await createModel(t, a.ownerKey, { apiKey: secret });
    const rows = (await t.database.db.execute(sql`select api_key_enc from models where id = ${m.id}`)) as unknown as { rows: Array<{ api_key_enc: string }> };
    const stored = rows.rows[0]!.api_key_enc;
    expect(stored).toMatch(/^v1:/);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(Buffer.from(secret).toString('base64'));
  });

  it('updates with PATCH, keeping the key unless a new one is sent', async () => {
    const a = await newTeam(t);
    const m = await createModel(t, a.ownerKey, { apiKey: 'sk-first-1111' });
    const api = t.api(a.ownerKey);
    const res = await api.PATCH('/api/v1/models/{modelId}', { ...at(m.id), body: { modelRequest: { name: 'Renamed', active: false } } });
    expect(res.data).toMatchObject({ name: 'Renamed', active: false, apiKey: '••••1111' });
    const res2 = await api.PATCH('/api/v1/models/{modelId}', { ...at(m.id), body: { apiKey: 'sk-second-2222' } });
    expect(res2.data?.apiKey).toBe('••••2222');
  });

  it('lists active models by default, all with /all, filters by minimum rating', async () => {
    const a = await newTeam(t);
    const low = await createModel(t, a.ownerKey, { modelRating: 2 });
    const high = await createModel(t, a.ownerKey, { modelRating: 5 });
    const off = await createModel(t, a.ownerKey, { active: false, modelRating: 5 });
    const api = t.api(a.ownerKey);
    const ids = (r: { data?: unknown }) =>
      expectShape(Type.Array(Model), r.data)
        .map((x) => x.id)
        .sort();
    expect(ids(await api.GET('/api/v1/models'))).toEqual([low.id, high.id].sort());
    expect(ids(await api.GET('/api/v1/models/all'))).toEqual([low.id, high.id, off.id].sort());
    expect(ids(await api.GET('/api/v1/models/all', { params: { query: { modelRating: 4 } } }))).toEqual([high.id, off.id].sort());
    // raw: the {modelIds} wrapper, which the document does not describe
    const list = await t.request({ method: 'POST', url: '/api/v1/models/list', key: a.ownerKey, payload: { modelIds: [off.id, high.id, randomUUID()] } });
    expect(ids({ data: list.json() })).toEqual([high.id]);
    const listAll = await api.POST('/api/v1/models/list/all', { body: [off.id, high.id] });
    expect(expectShape(Type.Array(Model), listAll.data).map((x) => x.id)).toEqual([off.id, high.id]);
  });

  it('members may read but not create or change models', async () => {
    const a = await newTeam(t);
    const m = await createModel(t, a.ownerKey);
    const member = await a.addUser('member');
    const api = t.api(member.key);
    expect((await api.GET('/api/v1/models/{modelId}', at(m.id))).response.status).toBe(200);
    expectProblem(await api.POST('/api/v1/models', { body: { name: 'x' } }), 403);
    expectProblem(await api.PATCH('/api/v1/models/{modelId}', { ...at(m.id), body: { name: 'x' } }), 403);
    // raw: the {model} wrapper, which the document does not describe
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models/remove-from-team', key: member.key, payload: { model: { id: m.id } } }), 403);
  });

  it('another team sees none of it: 404 everywhere, absent from lists', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const m = await createModel(t, a.ownerKey);
    const api = t.api(b.ownerKey);
    expectProblem(await api.GET('/api/v1/models/{modelId}', at(m.id)), 404);
    expectProblem(await api.PATCH('/api/v1/models/{modelId}', { ...at(m.id), body: { name: 'x' } }), 404);
    expectProblem(await api.POST('/api/v1/models/add-to-team', { body: { id: m.id } }), 404);
    expectProblem(await api.POST('/api/v1/models/remove-from-team', { body: { id: m.id } }), 404);
    const lists = await Promise.all([
      api.GET('/api/v1/models/all', { params: { query: { includeSystem: true } }, parseAs: 'text' }),
      api.POST('/api/v1/models/list/all', { body: [m.id], parseAs: 'text' }),
    ]);
    for (const l of lists) {
      expect(l.response.status).toBe(200);
      expect(l.data).not.toContain(m.id);
    }
  });

  it('rejects bad input with 400 and an existing id with 409', async () => {
    const a = await newTeam(t);
    const cases: unknown[] = [
      { name: 'x', apiBase: 'VENDOR_Z' },
      { name: 'x', contextWindow: 'big' },
      { name: 'x', contextWindow: -1 },
      { name: 'x', active: 'yes' },
      { name: 'x', unknownField: 1 },
      { name: 'x', url: 'ftp://example.com' },
      { name: 'x', promptWrapper: { wrapperName: 'w', value: 'no placeholder' } },
      { name: 'x', id: 'not-a-uuid' },
      { name: 'x', apiBase: 'ANTHROPIC', connectionType: 'AZURE' },
      { apiBase: 'OPENAI' },
      [1, 2],
    ];
    for (const payload of cases) {
      // raw: bodies the document refuses
      const res = await t.request({ method: 'POST', url: '/api/v1/models', key: a.ownerKey, payload: payload as object });
      expectProblem(res, 400);
    }
    expectProblem(await t.api(a.ownerKey).GET('/api/v1/models/{modelId}', at('not-a-uuid')), 400);
    // raw: a rating that is no number
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/models?modelRating=abc', key: a.ownerKey }), 400);
    const m = await createModel(t, a.ownerKey);
    expectProblem(await t.api(a.ownerKey).POST('/api/v1/models', { body: { id: m.id, name: 'again' } }), 409);
  });

  it('refuses link-local and metadata provider URLs', async () => {
    const a = await newTeam(t);
    for (const url of ['http://169.254.169.254/latest', 'http://[fe80::1]/v1', 'http://metadata.google.internal/']) {
      const p = expectProblem(await t.api(a.ownerKey).POST('/api/v1/models', { body: { name: 'x', url } }), 400);
      expect(p.code).toBe('provider_url_refused');
    }
  });
});

describe('PROVIDER_URL_POLICY=public-only', () => {
  it('refuses loopback and private provider URLs', async () => {
    const strict = await startTestApp({ providerUrlPolicy: 'public-only' });
    try {
      const team = await newTeam(strict);
      for (const url of ['http://127.0.0.1:11434/v1', 'http://10.0.0.5/v1', 'http://192.168.1.2/v1', 'http://[::1]:8000/v1']) {
        const p = expectProblem(await strict.api(team.ownerKey).POST('/api/v1/models', { body: { name: 'local', url } }), 400);
        expect(p.code).toBe('provider_url_refused');
      }
    } finally {
      await strict.close();
    }
  });
});

describe('system models', () => {
  it('only the instance admin creates them; teams see them with includeSystem and add them', async () => {
    const a = await newTeam(t);
    const api = t.api(a.ownerKey);
    expectProblem(await api.POST('/api/v1/models', { params: { query: { system: true } }, body: { name: 'sys' } }), 403);
    const sys = await createModel(t, ADMIN_KEY, { name: 'System GPT', apiKey: 'sk-system-9999' }, { system: true });
    expect(sys).toMatchObject({ system: true });

    const listText = async () => {
      const list = await api.GET('/api/v1/models', { parseAs: 'text' });
      expect(list.response.status).toBe(200);
      return list.data;
    };
    expect(await listText()).not.toContain(sys.id);
    const withSys = await api.GET('/api/v1/models', { params: { query: { includeSystem: true } } });
    expect(withSys.data?.find((m) => m.id === sys.id)).toMatchObject({ inTeam: false, apiKey: '••••9999' });

    // a team admin cannot change a system model
    expectProblem(await api.PATCH('/api/v1/models/{modelId}', { ...at(sys.id), body: { name: 'mine' } }), 403);

    // not usable in a workspace until the team adds it
    const early = await api.POST('/api/v1/workspaces', { body: { name: 'w', modelIds: [sys.id] } });
    expect(expectProblem(early, 400).code).toBe('unknown_model');

    // raw: the {model} wrapper, which the document does not describe
    const added = await t.request({ method: 'POST', url: '/api/v1/models/add-to-team', key: a.ownerKey, payload: { model: sys } });
    expect(added.json()).toMatchObject({ id: sys.id, inTeam: true });
    expect(await listText()).toContain(sys.id);
    expect((await api.POST('/api/v1/workspaces', { body: { name: 'w', modelIds: [sys.id] } })).response.status).toBe(200);
    // a member may not add or remove it for the team
    const member = await a.addUser('member');
    expectProblem(await t.api(member.key).POST('/api/v1/models/add-to-team', { body: { id: sys.id } }), 403);

    const removed = await api.POST('/api/v1/models/remove-from-team', { body: { id: sys.id } });
    expect(removed.data).toMatchObject({ inTeam: false });
    expect(await listText()).not.toContain(sys.id);
  });
});
