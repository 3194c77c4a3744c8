/** The audit log: every recorded action, who sees which entries, that nothing secret is in it, and that no one can change it. */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectStatus, multipartBody, type paths } from '../helpers/api.js';
import { cookie, login, randomAddress, SAME_ORIGIN, sessionFrom, signedInUser } from '../helpers/session.js';
import { expectShape } from '../helpers/shape.js';
import { PageOf } from '../../src/http/paging.js';
import { AuditEntry, type AuditEntryT } from '../../src/modules/audit/schema.js';
import { useStandIn } from '../support/use-standin.js';

let t: TestApp;
const stand = useStandIn();

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const AuditPage = PageOf(AuditEntry);

type AuditQuery = NonNullable<paths['/api/v1/audit']['get']['parameters']['query']>;

async function entries(key: string, query: AuditQuery = {}): Promise<AuditEntryT[]> {
  const res = await t.api(key).GET('/api/v1/audit', { params: { query: { size: 1000, ...query } } });
  return expectShape(AuditPage, expectStatus(res, 200)).content;
}
const auditCsv = (key: string, query: AuditQuery = {}) => t.api(key).GET('/api/v1/audit/csv', { params: { query }, parseAs: 'text' });

describe('audit log: every action, nothing secret', () => {
  it('records each action of the team, with actor and address, and never a key, password, token or prompt text', async () => {
    const team = await newTeam(t);
    const secrets: string[] = [team.ownerKey];
    const api = t.api(team.ownerKey, { remoteAddress: '10.9.8.7' });

    // users and sign-in
    const password = 'a very secret passphrase 42';
    const person = await signedInUser(t, team, 'member', password);
    secrets.push(person.key, person.session, password);
    expect((await login(t, person.email, 'wrong password guess 99')).statusCode).toBe(401);
    secrets.push('wrong password guess 99');
    expectStatus(await t.api(null, { headers: { ...cookie(person.session), ...SAME_ORIGIN } }).POST('/api/v1/auth/logout'), 204);
    const invited = expectStatus(await api.POST('/api/v1/users', { body: { name: 'Invited', email: `inv-${Date.now()}@example.com` } }), 201);
    secrets.push(invited.apiKey, new URL(invited.inviteUrl!).hash.slice('#token='.length));
    const userAt = { params: { path: { userId: invited.user.id } } };
    expectStatus(await api.PATCH('/api/v1/users/{userId}', { ...userAt, body: { role: 'admin' } }), 200);
    expectStatus(await api.DELETE('/api/v1/users/{userId}', userAt), 204);
    const key = expectStatus(await api.POST('/api/v1/api-keys', { body: { name: 'ci' } }), 201);
    secrets.push(key.key!);
    expectStatus(await api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: key.id } } }), 204);

    // models, workspaces, Plus, budgets
    const providerKey = 'sk-provider-secret-0123456789';
    secrets.push(providerKey);
    const model = await createModel(t, team.ownerKey, { url: stand.standIn.openaiBaseUrl, apiKey: providerKey });
    expectStatus(
      await api.PATCH('/api/v1/models/{modelId}', { params: { path: { modelId: model.id } }, body: { apiKey: `${providerKey}-2`, name: 'renamed model' } }),
      200,
    );
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    expectStatus(await api.PATCH('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId: ws.id } }, body: { name: 'renamed' } }), 200);
    const doomed = await createWorkspace(t, team.ownerKey);
    expectStatus(await api.DELETE('/api/v1/workspaces/{workspaceId}', { params: { path: { workspaceId: doomed.id } } }), 200);
    const form = multipartBody([
      { name: 'title', value: 'Handbook' },
      { name: 'files', filename: 'h.txt', contentType: 'text/plain', data: Buffer.from('The handbook text, confidential body 7731.') },
    ]);
    const plus = expectStatus(await t.api(team.ownerKey).POST('/api/v1/plus', form), 200);
    secrets.push('confidential body 7731');
    expectStatus(await api.DELETE('/api/v1/plus/{plusId}', { params: { path: { plusId: plus.id } } }), 200);
    const budget = expectStatus(await api.POST('/api/v1/budgets', { body: { scope: 'team', scopeId: team.teamId, period: 'day', credits: 10 } }), 201);
    expectStatus(await api.DELETE('/api/v1/budgets/{id}', { params: { path: { id: budget.id } } }), 204);
    // an MCP server, whose headers are secrets
    const mcpHeader = 'Bearer mcp-header-secret-8812';
    secrets.push(mcpHeader);
    const mcp = expectStatus(
      await api.POST('/api/v1/mcp-servers', {
        body: { name: 'tools', url: 'http://127.0.0.1:9/mcp?token=in-url-secret-4410', headers: { Authorization: mcpHeader } },
      }),
      200,
    );
    secrets.push('in-url-secret-4410');
    const mcpAt = { params: { path: { serverId: mcp.id } } };
    expectStatus(await api.PATCH('/api/v1/mcp-servers/{serverId}', { ...mcpAt, body: { enabled: false } }), 200);
    expectStatus(await api.DELETE('/api/v1/mcp-servers/{serverId}', mcpAt), 200);

    // a chat turn, pinned and exported; the exports
    const prompt = 'my prompt text the log must never hold 5521';
    secrets.push(prompt);
    const turn = expectStatus(await api.POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.id } }, body: { prompt } }), 200);
    const thread = { params: { path: { workspaceId: ws.id, threadId: turn.threadId } } };
    expectStatus(await api.PATCH('/api/v1/chat/{workspaceId}/history/{threadId}', { ...thread, body: { pinned: true } }), 200);
    expectStatus(
      await api.GET('/api/v1/chat/{workspaceId}/history/{threadId}/export', { params: { ...thread.params, query: { format: 'md' } }, parseAs: 'text' }),
      200,
    );
    const share = expectStatus(await api.POST('/api/v1/chat/{workspaceId}/history/{threadId}/share', thread), 200);
    secrets.push(share.token);
    expectStatus(await api.DELETE('/api/v1/chat/{workspaceId}/history/{threadId}/share', thread), 200);
    const day = new Date().toISOString().slice(0, 10);
    expectStatus(
      await api.GET('/api/v1/chat/prompt-logs/csv', {
        params: { query: { startDate: `${day}T00:00:00Z`, endDate: `${day}T23:59:59Z`, q: '5521' } },
        parseAs: 'text',
      }),
      200,
    );
    expectStatus(await api.GET('/api/v1/usage/csv', { params: { query: { groupBy: 'user' } }, parseAs: 'text' }), 200);
    expectStatus(await api.PATCH('/api/v1/teams/{teamId}', { params: { path: { teamId: team.teamId } }, body: { retention: { promptLogsDays: 30 } } }), 200);
    expectStatus(await api.GET('/api/v1/audit/csv', { parseAs: 'text' }), 200);

    const all = await entries(team.ownerKey);
    const actions = new Set(all.map((e) => e.action));
    for (const a of [
      'team.create',
      'user.create',
      'auth.login',
      'auth.login_failed',
      'auth.logout',
      'user.update',
      'user.delete',
      'apikey.create',
      'apikey.revoke',
      'model.create',
      'model.update',
      'workspace.create',
      'workspace.update',
      'workspace.delete',
      'plus.create',
      'plus.delete',
      'budget.create',
      'budget.delete',
      'mcp.create',
      'mcp.update',
      'mcp.delete',
      'share.create',
      'share.revoke',
      'thread.update',
      'export.thread',
      'export.prompt_logs',
      'export.usage',
      'team.update',
      'export.audit',
    ]) {
      expect(actions, a).toContain(a);
    }
    expect(all.every((e) => e.teamId === team.teamId)).toBe(true);

    const failed = all.find((e) => e.action === 'auth.login_failed')!;
    expect(failed).toMatchObject({ outcome: 'failure', target: { type: 'user', id: String(person.id) }, actor: { userId: null } });
    expect(failed.actor.ip).toMatch(/^10\./);
    const signIn = all.find((e) => e.action === 'auth.login')!;
    expect(signIn).toMatchObject({ outcome: 'success', actor: { userId: person.id, apiKeyId: null }, details: { method: 'password' } });
    const byKey = all.find((e) => e.action === 'workspace.delete')!;
    expect(byKey.actor).toMatchObject({ userId: team.ownerId, ip: '10.9.8.7' });
    expect(byKey.actor.apiKeyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(all.find((e) => e.action === 'user.update' && e.details.role === 'admin')).toMatchObject({ target: { id: String(invited.user.id) } });

    // Nothing secret, in the JSON or in the CSV, and nothing that looks like a key or prompt.
    const csv = expectStatus(await auditCsv(team.ownerKey), 200);
    const text = JSON.stringify(all) + csv;
    for (const s of secrets) expect(text, s).not.toContain(s);
    expect(text).not.toMatch(/atr_[A-Za-z0-9_-]{10,}/);
  });

  it('filters by action (exact or a resource), actor and dates; pages newest first', async () => {
    const team = await newTeam(t);
    const admin = await team.addUser('admin');
    await createWorkspace(t, team.ownerKey);
    await createWorkspace(t, admin.key);
    const ws = await entries(team.ownerKey, { action: 'workspace.create' });
    expect(ws).toHaveLength(2);
    expect(new Date(ws[0]!.time) >= new Date(ws[1]!.time)).toBe(true);
    expect((await entries(team.ownerKey, { action: 'workspace.*' })).length).toBe(2);
    expect((await entries(team.ownerKey, { action: 'workspace' })).length).toBe(2);
    const byAdmin = await entries(team.ownerKey, { actorId: admin.id });
    expect(byAdmin.map((e) => e.action)).toEqual(['workspace.create']);
    expect(await entries(team.ownerKey, { to: new Date(Date.now() - 3_600_000).toISOString() })).toEqual([]);
    const audit = (query: AuditQuery) => t.api(team.ownerKey).GET('/api/v1/audit', { params: { query } });
    const page = expectStatus(await audit({ size: 1, page: 1 }), 200);
    expect(page).toMatchObject({ size: 1, number: 1, numberOfElements: 1 });
    expect(page.totalElements).toBeGreaterThanOrEqual(4);
    expectProblem(await audit({ action: 'bad action' }), 400);
    expectProblem(await audit({ from: '2030-01-02T00:00:00Z', to: '2030-01-01T00:00:00Z' }), 400);
  });

  it('streams CSV with a header row and formula-safe cells', async () => {
    const team = await newTeam(t);
    await createWorkspace(t, team.ownerKey, { name: '=HYPERLINK("x")' });
    const res = await auditCsv(team.ownerKey, { action: 'workspace.create' });
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.response.headers.get('content-disposition')).toContain('audit.csv');
    const lines = res.data!.trim().split('\r\n');
    expect(lines[0]).toBe('id,time,teamId,actorUserId,actorApiKeyId,actorIp,action,targetType,targetId,outcome,details');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('workspace.create');
  });
});

describe('audit log: who sees what', () => {
  it('a member gets 403; another team sees none of this team; the instance admin sees every team', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const member = await a.addUser('member');
    const ws = await createWorkspace(t, a.ownerKey);
    expectProblem(await t.api(member.key).GET('/api/v1/audit'), 403);
    expectProblem(await t.api(member.key).GET('/api/v1/audit/csv'), 403);
    expectProblem(await t.api().GET('/api/v1/audit'), 401);
    const theirs = await entries(b.ownerKey);
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((e) => e.teamId === b.teamId)).toBe(true);
    expect(JSON.stringify(theirs)).not.toContain(ws.id);
    const csv = expectStatus(await auditCsv(b.ownerKey), 200);
    expect(csv).not.toContain(ws.id);
    expect(csv).not.toContain(a.teamId);
    const admin = await entries(ADMIN_KEY, { action: 'workspace.create' });
    expect(admin.some((e) => e.target?.id === ws.id && e.teamId === a.teamId)).toBe(true);
  });

  it('a failed sign-in for an unknown email belongs to no team: only the instance admin sees it', async () => {
    const address = randomAddress();
    expect((await login(t, `nobody-${Date.now()}@example.com`, 'whatever password', address)).statusCode).toBe(401);
    const seen = await entries(ADMIN_KEY, { action: 'auth.login_failed' });
    expect(seen.some((e) => e.teamId === null && e.actor.ip === address && e.outcome === 'failure')).toBe(true);
    const team = await newTeam(t);
    expect((await entries(team.ownerKey, { action: 'auth.login_failed' })).some((e) => e.actor.ip === address)).toBe(false);
  });

  it('an accepted invite is a sign-in', async () => {
    const team = await newTeam(t);
    const made = expectStatus(await t.api(team.ownerKey).POST('/api/v1/users', { body: { name: 'N', email: `n-${Date.now()}@example.com` } }), 201);
    const token = new URL(made.inviteUrl!).hash.slice('#token='.length);
    const res = await t.api().POST('/api/v1/auth/accept-invite', { body: { token, password: 'new password 123' } });
    expect(sessionFrom(res.response)).toBeTruthy();
    const signIns = await entries(team.ownerKey, { action: 'auth.login' });
    expect(signIns).toEqual([expect.objectContaining({ actor: expect.objectContaining({ userId: made.user.id }), details: { method: 'invite' } })]);
  });
});

describe('audit log: append-only', () => {
  it('has no route that changes or deletes an entry, and the database refuses UPDATE and DELETE', async () => {
    const team = await newTeam(t);
    const [entry] = await entries(team.ownerKey);
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      // raw: a path the API does not have
      const res = await t.request({ method, url: `/api/v1/audit/${entry!.id}`, key: ADMIN_KEY, payload: {} });
      expect([404, 405]).toContain(res.statusCode);
    }
    const db = t.database.db;
    const refusal = (q: Promise<unknown>) =>
      q.then(
        () => 'allowed',
        (err: Error & { cause?: Error }) => String(err.cause?.message ?? err.message),
      );
    expect(await refusal(db.execute(sql`update audit_log set action = 'x' where id = ${entry!.id}`))).toMatch(/append-only: UPDATE refused/);
    expect(await refusal(db.execute(sql`delete from audit_log where id = ${entry!.id}`))).toMatch(/append-only: DELETE refused/);
    expect((await entries(team.ownerKey)).find((e) => e.id === entry!.id)).toEqual(entry);
  });

  it('an entry is written with its change or not at all', async () => {
    const team = await newTeam(t);
    const before = (await entries(team.ownerKey)).length;
    // A duplicate user fails inside the transaction: no user, no entry.
    const email = `dup-${Date.now()}@example.com`;
    expect((await t.api(team.ownerKey).POST('/api/v1/users', { body: { name: 'A', email } })).response.status).toBe(201);
    expectProblem(await t.api(team.ownerKey).POST('/api/v1/users', { body: { name: 'B', email } }), 409);
    expect((await entries(team.ownerKey)).length).toBe(before + 1);
  });
});
