import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey, CreatedApiKey, CreateTeamAnswer, CreateUserAnswer, Me, User } from '../../src/modules/teams/schema.js';
import { ADMIN_KEY, expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { expectShape } from '../helpers/shape.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('authentication', () => {
  it('answers 401 problem+json without a key or with an unknown key', async () => {
    expectProblem(await t.api().GET('/api/v1/me'), 401);
    const bad = expectProblem(await t.api('atr_nope').GET('/api/v1/me'), 401);
    expect(bad.code).toBe('invalid_api_key');
    expectProblem(await t.api(null, { headers: { authorization: 'Basic abc' } }).GET('/api/v1/me'), 401);
  });

  it('tells the caller who they are', async () => {
    const team = await newTeam(t, 'Acme');
    const res = await t.api(team.ownerKey).GET('/api/v1/me');
    expect(res.response.status).toBe(200);
    expect(expectShape(Me, res.data)).toMatchObject({
      user: { id: team.ownerId, role: 'owner', instanceAdmin: false },
      team: { id: team.teamId, name: 'Acme' },
    });
  });

  it('bootstraps the instance admin from ADMIN_API_KEY', async () => {
    const res = await t.api(ADMIN_KEY).GET('/api/v1/me');
    expect(res.data?.user).toMatchObject({ role: 'owner', instanceAdmin: true });
  });
});

describe('teams and users', () => {
  it('only the instance admin creates teams', async () => {
    const made = await t.api(ADMIN_KEY).POST('/api/v1/teams', { body: { name: 'Shaped', ownerName: 'O', ownerEmail: `o-${randomUUID()}@example.com` } });
    expect(made.response.status).toBe(201);
    expectShape(CreateTeamAnswer, made.data);
    const team = await newTeam(t);
    const res = await t.api(team.ownerKey).POST('/api/v1/teams', { body: { name: 'x', ownerName: 'y', ownerEmail: 'y@z.io' } });
    expectProblem(res, 403);
  });

  it('owners create users; members may not; users of another team are invisible', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const member = await a.addUser('member');
    expectProblem(await t.api(member.key).POST('/api/v1/users', { body: { name: 'n', email: 'n@x.io' } }), 403);
    expectProblem(await t.api(member.key).GET('/api/v1/users'), 403);
    const list = await t.api(a.ownerKey).GET('/api/v1/users');
    expect(
      expectShape(Type.Array(User), list.data)
        .map((u) => u.id)
        .sort(),
    ).toEqual([a.ownerId, member.id].sort());
    // b cannot delete a's member: 404, not 403
    expectProblem(await t.api(b.ownerKey).DELETE('/api/v1/users/{userId}', { params: { path: { userId: member.id } } }), 404);
  });

  it('rejects a duplicate email with 409 and bad input with 400', async () => {
    const a = await newTeam(t);
    const api = t.api(a.ownerKey);
    const body = { name: 'Dup', email: 'dup@example.com', role: 'member' } as const;
    const first = await api.POST('/api/v1/users', { body });
    expect(first.response.status).toBe(201);
    expectShape(CreateUserAnswer, first.data);
    expectProblem(await api.POST('/api/v1/users', { body: { ...body, email: 'DUP@example.com' } }), 409);
    const bad = expectProblem(
      // raw: a role the document does not have
      await t.request({ method: 'POST', url: '/api/v1/users', key: a.ownerKey, payload: { name: 'x', email: 'no-at', role: 'god' } }),
      400,
    );
    expect((bad.errors as unknown[]).length).toBeGreaterThanOrEqual(2);
  });

  it('a deleted user can no longer authenticate', async () => {
    const a = await newTeam(t);
    const m = await a.addUser('member');
    expect((await t.api(m.key).GET('/api/v1/me')).response.status).toBe(200);
    expect((await t.api(a.ownerKey).DELETE('/api/v1/users/{userId}', { params: { path: { userId: m.id } } })).response.status).toBe(204);
    expectProblem(await t.api(m.key).GET('/api/v1/me'), 401);
    // raw: a user id that is no number
    expectProblem(await t.request({ method: 'DELETE', url: '/api/v1/users/abc', key: a.ownerKey }), 400);
  });
});

describe('api keys', () => {
  it('shows a key once, lists it without the secret, and revokes it', async () => {
    const a = await newTeam(t);
    const api = t.api(a.ownerKey);
    const created = await api.POST('/api/v1/api-keys', { body: { name: 'ci' } });
    expect(created.response.status).toBe(201);
    const { id, key } = expectShape(CreatedApiKey, created.data);
    expect(key).toMatch(/^atr_[A-Za-z0-9_-]{40,}$/);
    expect((await t.api(key).GET('/api/v1/me')).response.status).toBe(200);
    const list = await api.GET('/api/v1/api-keys', { parseAs: 'text' });
    const listed = expectShape(Type.Array(ApiKey), JSON.parse(list.data ?? 'null')).find((k) => k.id === id);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty('key');
    expect(list.data).not.toContain(key);
    // another user cannot revoke it
    const m = await a.addUser('member');
    const path = { params: { path: { id } } };
    expectProblem(await t.api(m.key).DELETE('/api/v1/api-keys/{id}', path), 404);
    expect((await api.DELETE('/api/v1/api-keys/{id}', path)).response.status).toBe(204);
    expectProblem(await t.api(key).GET('/api/v1/me'), 401);
  });
});

describe('errors and documents', () => {
  it('answers malformed JSON, wrong content types, oversized bodies and unknown routes with problem+json', async () => {
    const a = await newTeam(t);
    const malformed = await t.request({
      method: 'POST',
      url: '/api/v1/api-keys', // raw: malformed JSON
      key: a.ownerKey,
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expectProblem(malformed, 400);
    expect(malformed.body).not.toMatch(/at .*\.js|SyntaxError/);
    // raw: a content type the document does not take
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/api-keys', key: a.ownerKey, headers: { 'content-type': 'text/xml' }, payload: '<a/>' }), 415);
    const huge = JSON.stringify({ name: 'x'.repeat(2_000_000) });
    expectProblem(
      // raw: a body over the size limit, sent as its bytes
      await t.request({ method: 'POST', url: '/api/v1/api-keys', key: a.ownerKey, headers: { 'content-type': 'application/json' }, payload: huge }),
      413,
    );
    // raw: an unknown path
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/nothing-here', key: a.ownerKey }), 404);
    expectProblem(
      // raw: a JSON null body
      await t.request({ method: 'POST', url: '/api/v1/api-keys', key: a.ownerKey, headers: { 'content-type': 'application/json' }, payload: 'null' }),
      400,
    );
  });

  it('refuses NUL characters, which PostgreSQL text cannot hold, with 400', async () => {
    const a = await newTeam(t);
    const api = t.api(a.ownerKey);
    expectProblem(await api.POST('/api/v1/users', { body: { name: 'n', email: 'a\u0000b@x.io' } }), 400);
    expectProblem(await api.POST('/api/v1/workspaces', { body: { name: 'x\u0000y', samplePrompts: ['ok'] } }), 400);
    expectProblem(await api.GET('/api/v1/chat/prompt-logs/paged', { params: { query: { q: '\u0000' } } }), 400);
    expect((await api.GET('/api/v1/workspaces')).data).toEqual([]);
  });

  it('serves health, readiness, OpenAPI 3.1 and docs', async () => {
    // raw: none of these is in the document (their URLs are not /api)
    expect((await t.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    for (const p of ['/api/v1/me', '/api/v1/models', '/api/v1/models/{modelId}', '/api/v1/workspaces/{workspaceId}/{modelId}']) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
    expect((await t.request({ method: 'GET', url: '/docs/' })).statusCode).toBe(200);
  });
});
