/**
 * Small leaks: a taken client-chosen id answers the same whoever in the team holds it (and another
 * team's id is no conflict at all), and file parts
 * are accepted only under the documented field name, storing nothing otherwise.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { multipartBody } from '../helpers/api.js';
import type { Part } from '../helpers/multipart.js';

let t: TestApp;
let a: TeamFixture;
let b: TeamFixture;
beforeAll(async () => {
  t = await startTestApp();
  a = await newTeam(t);
  b = await newTeam(t);
});
afterAll(() => t.close());

const text = (name: string, field = 'files'): Part => ({
  name: field,
  filename: name,
  contentType: 'text/plain',
  data: Buffer.from(`Notes in ${name}: the quarterly numbers.\n`),
});

async function filesOf(plusId: string): Promise<number> {
  const r = (await t.database.db.execute(sql`select count(*)::int as n from plus_files where plus_id = ${plusId}::uuid`)) as unknown as {
    rows: Array<{ n: number }>;
  };
  return r.rows[0]!.n;
}

/** POST /workspaces/{id}: a workspace under a client-chosen id. */
const newWorkspace = (key: string, workspaceId: string, name: string) =>
  t.api(key).POST('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId } }, body: { name } });

async function createPlus(key: string, fields: Record<string, string>, parts: Part[] = []) {
  return t.api(key).POST('/api/v1/plus', multipartBody([...Object.entries(fields).map(([name, value]) => ({ name, value })), ...parts]));
}

describe('a client-chosen id that is taken', () => {
  // Ids are per team: another team's id is created as a free one (test/security/team-scoped-ids.test.ts).
  it('in the caller’s own team: one 409 per kind that names no id, whoever in the team holds it', async () => {
    const id = randomUUID();
    expect((await newWorkspace(a.ownerKey, id, 'first')).response.status).toBe(200);
    await createModel(t, a.ownerKey, { id });
    const member = await a.addUser('member');
    expect((await createPlus(member.key, { id, title: 'mine', isPublic: 'false' })).response.status).toBe(200);
    const caller = await a.addUser('member');
    const answers = [
      await newWorkspace(a.ownerKey, id, 'again'),
      await t.api(a.ownerKey).POST('/api/v1/models', { body: { id, name: 'again', apiBase: 'OPENAI', url: 'http://127.0.0.1:9/v1', baseModel: 'gpt-test' } }),
      // a teammate's private entry: taken, though the caller cannot see it
      await createPlus(caller.key, { id, title: 'take it' }),
    ].map((res) => expectProblem(res, 409));
    expect(answers.map((p) => [p.code, p.detail])).toEqual([
      ['conflict', 'A workspace with this id already exists'],
      ['conflict', 'A model with this id already exists'],
      ['conflict', 'A Plus entry with this id already exists'],
    ]);
    expect(JSON.stringify(answers)).not.toContain(id);
    expect(JSON.stringify(answers[2])).not.toMatch(/team|private|visible/i);
  });

  it('in another team: created as a free id would be, so "taken" says nothing about other teams', async () => {
    const id = randomUUID();
    expect((await newWorkspace(a.ownerKey, id, 'first')).response.status).toBe(200);
    await createModel(t, a.ownerKey, { id });
    expect((await createPlus(a.ownerKey, { id, title: 'first' })).response.status).toBe(200);
    expect((await newWorkspace(b.ownerKey, id, 'again')).response.status).toBe(200);
    await createModel(t, b.ownerKey, { id });
    expect((await createPlus(b.ownerKey, { id, title: 'again' })).response.status).toBe(200);
  });
});

describe('a user’s email', () => {
  it('is "taken" only within the caller’s own team: another team’s user does not make a 409', async () => {
    const email = `shared-${randomUUID()}@example.com`;
    const add = (key: string) => t.api(key).POST('/api/v1/users', { body: { name: 'Sam', email, role: 'member' } });
    expect((await add(a.ownerKey)).response.status).toBe(201);
    expect((await add(b.ownerKey)).response.status).toBe(201);
    const again = expectProblem(await add(b.ownerKey), 409);
    expect(again.detail).toBe(`A user with email ${email} already exists in this team`);
  });
});

describe('file parts under another field name', () => {
  it('POST /plus: 400 naming the field, and no entry is created', async () => {
    const id = randomUUID();
    const res = await createPlus(a.ownerKey, { id, title: 'wrong field' }, [text('good.txt'), text('bad.txt', 'file')]);
    const problem = expectProblem(res, 400);
    expect(problem.code).toBe('unexpected_file_field');
    expect(problem.detail).toContain('"file"');
    expect(problem.detail).toContain('"files"');
    expect(problem.errors).toEqual([{ path: 'body/file', message: expect.any(String) }]);
    expectProblem(await t.api(a.ownerKey).GET('/api/v1/plus/{plusId}', { params: { path: { plusId: id } } }), 404);
  });

  it('POST /plus with an existing id, add-file and the chat’s add-file: 400, no file added', async () => {
    const id = randomUUID();
    expect((await createPlus(a.ownerKey, { id, title: 'entry' }, [text('one.txt')])).response.status).toBe(200);
    expect(await filesOf(id)).toBe(1);

    const update = await createPlus(a.ownerKey, { id, title: 'renamed' }, [text('attachment.txt', 'attachment')]);
    expect(expectProblem(update, 400).detail).toContain('"attachment"');
    const api = t.api(a.ownerKey);
    const files = () => multipartBody([text('two.txt'), text('three.txt', 'upload')]);
    for (const res of [
      await api.POST('/api/v1/plus/{plusId}/add-file', { params: { path: { plusId: id } }, ...files() }),
      await api.POST('/api/v1/chat/{plusId}/add-file', { params: { path: { plusId: id } }, ...files() }),
    ]) {
      expect(expectProblem(res, 400).detail).toContain('"upload"');
    }
    expect(await filesOf(id)).toBe(1);
    const entry = await api.GET('/api/v1/plus/{plusId}', { params: { path: { plusId: id } } });
    expect(entry.data?.title).toBe('entry');
  });

  it('the documented field still takes several files', async () => {
    const res = await createPlus(a.ownerKey, { title: 'right field' }, [text('a.txt'), text('b.txt')]);
    expect(res.response.status).toBe(200);
    expect(res.data?.files).toHaveLength(2);
  });
});

describe('a provider key sealed under another SECRET_KEY', () => {
  it('answers 400 model_key_unreadable, stores no turn, and leaks nothing', async () => {
    const m = await createModel(t, a.ownerKey, { apiKey: 'sk-this-one-is-fine-0000' });
    const ws = await createWorkspace(t, a.ownerKey, { modelIds: [m.id] });
    const foreign = SecretBox.fromSecret('another-nodes-key-0123456789').seal('sk-sealed-elsewhere-1111');
    await t.database.db.execute(sql`update models set api_key_enc = ${foreign}, updated = now() where id = ${m.id}::uuid`);

    const api = t.api(a.ownerKey);
    const res = await api.POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.id } }, body: { prompt: 'hello' } });
    const problem = expectProblem(res, 400);
    expect(problem.code).toBe('model_key_unreadable');
    expect(problem.detail).toContain('SECRET_KEY');
    expect(JSON.stringify(res.error)).not.toContain(foreign.slice(3, 20));
    const history = await api.GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId: ws.id } } });
    expect(history.data).toEqual([]);
  });
});
