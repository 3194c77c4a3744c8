/** The audit log: every recorded action, who sees which entries, that nothing secret is in it, and that no one can change it. */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_KEY, expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { multipart } from '../helpers/multipart.js';
import { cookie, login, randomAddress, SAME_ORIGIN, sessionFrom, signedInUser } from '../helpers/session.js';
import { expectShape } from '../helpers/shape.js';
import { PageOf } from '../../src/http/paging.js';
import { AuditEntry, type AuditEntryT } from '../../src/modules/audit/schema.js';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';

let t: TestApp;
let standIn: StandInProvider;

beforeAll(async () => {
  standIn = await startStandInProvider();
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  await standIn.close();
});
beforeEach(() => standIn.reset());

const AuditPage = PageOf(AuditEntry);

async function entries(key: string, query = ''): Promise<AuditEntryT[]> {
  const res = await t.request({ method: 'GET', url: `/api/v1/audit?size=1000${query}`, key });
  expect(res.statusCode, res.body).toBe(200);
  return expectShape(AuditPage, res.json()).content;
}

const ok = <R extends { statusCode: number; body: string }>(res: R, status = 200): R => {
  expect(res.statusCode, res.body).toBe(status);
  return res;
};

describe('audit log: every action, nothing secret', () => {
  it('records each action of the team, with actor and address, and never a key, password, token or prompt text', async () => {
    const team = await newTeam(t);
    const secrets: string[] = [team.ownerKey];
    const req = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, key = team.ownerKey) =>
      t.request({ method, url, key, ...(payload ? { payload } : {}), remoteAddress: '10.9.8.7' });

    // users and sign-in
    const password = 'a very secret passphrase 42';
    const person = await signedInUser(t, team, 'member', password);
    secrets.push(person.key, person.session, password);
    expect((await login(t, person.email, 'wrong password guess 99')).statusCode).toBe(401);
    secrets.push('wrong password guess 99');
    ok(await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers: { ...cookie(person.session), ...SAME_ORIGIN } }), 204);
    const invited = ok(await req('POST', '/api/v1/users', { name: 'Invited', email: `inv-${Date.now()}@example.com` }), 201).json();
    secrets.push(invited.apiKey, new URL(invited.inviteUrl).hash.slice('#token='.length));
    ok(await req('PATCH', `/api/v1/users/${invited.user.id}`, { role: 'admin' }));
    ok(await req('DELETE', `/api/v1/users/${invited.user.id}`), 204);
    const key = ok(await req('POST', '/api/v1/api-keys', { name: 'ci' }), 201).json();
    secrets.push(key.key);
    ok(await req('DELETE', `/api/v1/api-keys/${key.id}`), 204);

    // models, workspaces, Plus, budgets
    const providerKey = 'sk-provider-secret-0123456789';
    secrets.push(providerKey);
    const model = await createModel(t, team.ownerKey, { url: standIn.openaiBaseUrl, apiKey: providerKey });
    ok(await req('PATCH', `/api/v1/models/${model.id}`, { apiKey: `${providerKey}-2`, name: 'renamed model' }));
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    ok(await req('PATCH', `/api/v1/workspaces/${ws.id}`, { name: 'renamed' }));
    const doomed = await createWorkspace(t, team.ownerKey);
    ok(await req('DELETE', `/api/v1/workspaces/${doomed.id}`));
    const form = multipart([
      { name: 'title', value: 'Handbook' },
      { name: 'files', filename: 'h.txt', contentType: 'text/plain', data: Buffer.from('The handbook text, confidential body 7731.') },
    ]);
    const plus = ok(await t.request({ method: 'POST', url: '/api/v1/plus', key: team.ownerKey, ...form })).json();
    secrets.push('confidential body 7731');
    ok(await req('DELETE', `/api/v1/plus/${plus.id}`));
    const budget = ok(await req('POST', '/api/v1/budgets', { scope: 'team', scopeId: team.teamId, period: 'day', credits: 10 }), 201).json();
    ok(await req('DELETE', `/api/v1/budgets/${budget.id}`), 204);
    // an MCP server, whose headers are secrets
    const mcpHeader = 'Bearer mcp-header-secret-8812';
    secrets.push(mcpHeader);
    const mcp = ok(
      await req('POST', '/api/v1/mcp-servers', {
        name: 'tools',
        url: 'http://127.0.0.1:9/mcp?token=in-url-secret-4410',
        headers: { Authorization: mcpHeader },
      }),
    ).json();
    secrets.push('in-url-secret-4410');
    ok(await req('PATCH', `/api/v1/mcp-servers/${mcp.id}`, { enabled: false }));
    ok(await req('DELETE', `/api/v1/mcp-servers/${mcp.id}`));

    // a chat turn, pinned and exported; the exports
    const prompt = 'my prompt text the log must never hold 5521';
    secrets.push(prompt);
    const turn = ok(await req('POST', `/api/v1/chat/${ws.id}/completions`, { prompt })).json();
    ok(await req('PATCH', `/api/v1/chat/${ws.id}/history/${turn.threadId}`, { pinned: true }));
    ok(await req('GET', `/api/v1/chat/${ws.id}/history/${turn.threadId}/export?format=md`));
    const share = ok(await req('POST', `/api/v1/chat/${ws.id}/history/${turn.threadId}/share`)).json();
    secrets.push(share.token);
    ok(await req('DELETE', `/api/v1/chat/${ws.id}/history/${turn.threadId}/share`));
    const day = new Date().toISOString().slice(0, 10);
    ok(await req('GET', `/api/v1/chat/prompt-logs/csv?startDate=${day}T00:00:00Z&endDate=${day}T23:59:59Z&q=5521`));
    ok(await req('GET', '/api/v1/usage/csv?groupBy=user'));
    ok(await req('PATCH', `/api/v1/teams/${team.teamId}`, { retention: { promptLogsDays: 30 } }));
    ok(await req('GET', '/api/v1/audit/csv'));

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
    const csv = (await t.request({ method: 'GET', url: '/api/v1/audit/csv', key: team.ownerKey })).body;
    const text = JSON.stringify(all) + csv;
    for (const s of secrets) expect(text, s).not.toContain(s);
    expect(text).not.toMatch(/atr_[A-Za-z0-9_-]{10,}/);
  });

  it('filters by action (exact or a resource), actor and dates; pages newest first', async () => {
    const team = await newTeam(t);
    const admin = await team.addUser('admin');
    await createWorkspace(t, team.ownerKey);
    await createWorkspace(t, admin.key);
    const ws = await entries(team.ownerKey, '&action=workspace.create');
    expect(ws).toHaveLength(2);
    expect(new Date(ws[0]!.time) >= new Date(ws[1]!.time)).toBe(true);
    expect((await entries(team.ownerKey, '&action=workspace.*')).length).toBe(2);
    expect((await entries(team.ownerKey, '&action=workspace')).length).toBe(2);
    const byAdmin = await entries(team.ownerKey, `&actorId=${admin.id}`);
    expect(byAdmin.map((e) => e.action)).toEqual(['workspace.create']);
    expect(await entries(team.ownerKey, `&to=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)).toEqual([]);
    const page = (await t.request({ method: 'GET', url: '/api/v1/audit?size=1&page=1', key: team.ownerKey })).json();
    expect(page).toMatchObject({ size: 1, number: 1, numberOfElements: 1 });
    expect(page.totalElements).toBeGreaterThanOrEqual(4);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/audit?action=bad action', key: team.ownerKey }), 400);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/audit?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z', key: team.ownerKey }), 400);
  });

  it('streams CSV with a header row and formula-safe cells', async () => {
    const team = await newTeam(t);
    await createWorkspace(t, team.ownerKey, { name: '=HYPERLINK("x")' });
    const res = await t.request({ method: 'GET', url: '/api/v1/audit/csv?action=workspace.create', key: team.ownerKey });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toContain('audit.csv');
    const lines = res.body.trim().split('\r\n');
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
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/audit', key: member.key }), 403);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/audit/csv', key: member.key }), 403);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/audit' }), 401);
    const theirs = await entries(b.ownerKey);
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((e) => e.teamId === b.teamId)).toBe(true);
    expect(JSON.stringify(theirs)).not.toContain(ws.id);
    const csv = (await t.request({ method: 'GET', url: '/api/v1/audit/csv', key: b.ownerKey })).body;
    expect(csv).not.toContain(ws.id);
    expect(csv).not.toContain(a.teamId);
    const admin = await entries(ADMIN_KEY, '&action=workspace.create');
    expect(admin.some((e) => e.target?.id === ws.id && e.teamId === a.teamId)).toBe(true);
  });

  it('a failed sign-in for an unknown email belongs to no team: only the instance admin sees it', async () => {
    const address = randomAddress();
    expect((await login(t, `nobody-${Date.now()}@example.com`, 'whatever password', address)).statusCode).toBe(401);
    const seen = await entries(ADMIN_KEY, '&action=auth.login_failed');
    expect(seen.some((e) => e.teamId === null && e.actor.ip === address && e.outcome === 'failure')).toBe(true);
    const team = await newTeam(t);
    expect((await entries(team.ownerKey, '&action=auth.login_failed')).some((e) => e.actor.ip === address)).toBe(false);
  });

  it('an accepted invite is a sign-in', async () => {
    const team = await newTeam(t);
    const made = (
      await t.request({ method: 'POST', url: '/api/v1/users', key: team.ownerKey, payload: { name: 'N', email: `n-${Date.now()}@example.com` } })
    ).json();
    const token = new URL(made.inviteUrl).hash.slice('#token='.length);
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/accept-invite', payload: { token, password: 'new password 123' } });
    expect(sessionFrom(res)).toBeTruthy();
    const signIns = await entries(team.ownerKey, '&action=auth.login');
    expect(signIns).toEqual([expect.objectContaining({ actor: expect.objectContaining({ userId: made.user.id }), details: { method: 'invite' } })]);
  });
});

describe('audit log: append-only', () => {
  it('has no route that changes or deletes an entry, and the database refuses UPDATE and DELETE', async () => {
    const team = await newTeam(t);
    const [entry] = await entries(team.ownerKey);
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
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
    expect((await t.request({ method: 'POST', url: '/api/v1/users', key: team.ownerKey, payload: { name: 'A', email } })).statusCode).toBe(201);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/users', key: team.ownerKey, payload: { name: 'B', email } }), 409);
    expect((await entries(team.ownerKey)).length).toBe(before + 1);
  });
});
