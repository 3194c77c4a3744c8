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

describe('team models', () => {
  it('creates a model wrapped or bare, with the seed enum aliases, and never returns the key', async () => {
    const a = await newTeam(t);
    const secret = 'sk-super-secret-value-1234';
    const wrapped = await t.request({
      method: 'POST',
      url: '/api/v1/models',
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

    const got = await t.request({ method: 'GET', url: `/api/v1/models/${m.id}`, key: a.ownerKey });
    expect(got.json().apiKey).toBe('••••1234');
    expect(got.body).not.toContain(secret);
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
      const listed = await t.request({ method: 'GET', url: '/api/v1/models', key: a.ownerKey });
      expect(listed.json().find((x: { id: string }) => x.id === m.id).apiKey).toBe(mask);
      const patched = await t.request({ method: 'PATCH', url: `/api/v1/models/${m.id}`, key: a.ownerKey, payload: { apiKey: key } });
      expect(patched.json().apiKey).toBe(mask);
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
    const res = await t.request({
      method: 'PATCH',
      url: `/api/v1/models/${m.id}`,
      key: a.ownerKey,
      payload: { modelRequest: { name: 'Renamed', active: false } },
    });
    expect(res.json()).toMatchObject({ name: 'Renamed', active: false, apiKey: '••••1111' });
    const res2 = await t.request({ method: 'PATCH', url: `/api/v1/models/${m.id}`, key: a.ownerKey, payload: { apiKey: 'sk-second-2222' } });
    expect(res2.json().apiKey).toBe('••••2222');
  });

  it('lists active models by default, all with /all, filters by minimum rating', async () => {
    const a = await newTeam(t);
    const low = await createModel(t, a.ownerKey, { modelRating: 2 });
    const high = await createModel(t, a.ownerKey, { modelRating: 5 });
    const off = await createModel(t, a.ownerKey, { active: false, modelRating: 5 });
    const ids = (r: { json(): unknown }) =>
      expectShape(Type.Array(Model), r.json())
        .map((x) => x.id)
        .sort();
    expect(ids(await t.request({ method: 'GET', url: '/api/v1/models', key: a.ownerKey }))).toEqual([low.id, high.id].sort());
    expect(ids(await t.request({ method: 'GET', url: '/api/v1/models/all', key: a.ownerKey }))).toEqual([low.id, high.id, off.id].sort());
    expect(ids(await t.request({ method: 'GET', url: '/api/v1/models/all?modelRating=4', key: a.ownerKey }))).toEqual([high.id, off.id].sort());
    const list = await t.request({ method: 'POST', url: '/api/v1/models/list', key: a.ownerKey, payload: { modelIds: [off.id, high.id, randomUUID()] } });
    expect(ids(list)).toEqual([high.id]);
    const listAll = await t.request({ method: 'POST', url: '/api/v1/models/list/all', key: a.ownerKey, payload: [off.id, high.id] });
    expect(expectShape(Type.Array(Model), listAll.json()).map((x) => x.id)).toEqual([off.id, high.id]);
  });

  it('members may read but not create or change models', async () => {
    const a = await newTeam(t);
    const m = await createModel(t, a.ownerKey);
    const member = await a.addUser('member');
    expect((await t.request({ method: 'GET', url: `/api/v1/models/${m.id}`, key: member.key })).statusCode).toBe(200);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models', key: member.key, payload: { name: 'x' } }), 403);
    expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/models/${m.id}`, key: member.key, payload: { name: 'x' } }), 403);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models/remove-from-team', key: member.key, payload: { model: { id: m.id } } }), 403);
  });

  it('another team sees none of it: 404 everywhere, absent from lists', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const m = await createModel(t, a.ownerKey);
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/models/${m.id}`, key: b.ownerKey }), 404);
    expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/models/${m.id}`, key: b.ownerKey, payload: { name: 'x' } }), 404);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models/add-to-team', key: b.ownerKey, payload: { id: m.id } }), 404);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models/remove-from-team', key: b.ownerKey, payload: { id: m.id } }), 404);
    const lists = await Promise.all([
      t.request({ method: 'GET', url: '/api/v1/models/all?includeSystem=true', key: b.ownerKey }),
      t.request({ method: 'POST', url: '/api/v1/models/list/all', key: b.ownerKey, payload: [m.id] }),
    ]);
    for (const l of lists) expect(l.body).not.toContain(m.id);
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
      const res = await t.request({ method: 'POST', url: '/api/v1/models', key: a.ownerKey, payload: payload as object });
      expectProblem(res, 400);
    }
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/models/not-a-uuid', key: a.ownerKey }), 400);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/models?modelRating=abc', key: a.ownerKey }), 400);
    const m = await createModel(t, a.ownerKey);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models', key: a.ownerKey, payload: { id: m.id, name: 'again' } }), 409);
  });

  it('refuses link-local and metadata provider URLs', async () => {
    const a = await newTeam(t);
    for (const url of ['http://169.254.169.254/latest', 'http://[fe80::1]/v1', 'http://metadata.google.internal/']) {
      const p = expectProblem(await t.request({ method: 'POST', url: '/api/v1/models', key: a.ownerKey, payload: { name: 'x', url } }), 400);
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
        const p = expectProblem(await strict.request({ method: 'POST', url: '/api/v1/models', key: team.ownerKey, payload: { name: 'local', url } }), 400);
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
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models?system=true', key: a.ownerKey, payload: { name: 'sys' } }), 403);
    const sys = await createModel(t, ADMIN_KEY, { name: 'System GPT', apiKey: 'sk-system-9999' }, { system: true });
    expect(sys).toMatchObject({ system: true });

    const plain = await t.request({ method: 'GET', url: '/api/v1/models', key: a.ownerKey });
    expect(plain.body).not.toContain(sys.id);
    const withSys = await t.request({ method: 'GET', url: '/api/v1/models?includeSystem=true', key: a.ownerKey });
    expect(withSys.json().find((m: { id: string }) => m.id === sys.id)).toMatchObject({ inTeam: false, apiKey: '••••9999' });

    // a team admin cannot change a system model
    expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/models/${sys.id}`, key: a.ownerKey, payload: { name: 'mine' } }), 403);

    // not usable in a workspace until the team adds it
    const early = await t.request({ method: 'POST', url: '/api/v1/workspaces', key: a.ownerKey, payload: { name: 'w', modelIds: [sys.id] } });
    expect(expectProblem(early, 400).code).toBe('unknown_model');

    const added = await t.request({ method: 'POST', url: '/api/v1/models/add-to-team', key: a.ownerKey, payload: { model: sys } });
    expect(added.json()).toMatchObject({ id: sys.id, inTeam: true });
    expect((await t.request({ method: 'GET', url: '/api/v1/models', key: a.ownerKey })).body).toContain(sys.id);
    expect((await t.request({ method: 'POST', url: '/api/v1/workspaces', key: a.ownerKey, payload: { name: 'w', modelIds: [sys.id] } })).statusCode).toBe(200);
    // a member may not add or remove it for the team
    const member = await a.addUser('member');
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/models/add-to-team', key: member.key, payload: { id: sys.id } }), 403);

    const removed = await t.request({ method: 'POST', url: '/api/v1/models/remove-from-team', key: a.ownerKey, payload: { id: sys.id } });
    expect(removed.json()).toMatchObject({ inTeam: false });
    expect((await t.request({ method: 'GET', url: '/api/v1/models', key: a.ownerKey })).body).not.toContain(sys.id);
  });
});
