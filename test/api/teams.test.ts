import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey, CreateTeamAnswer, CreateUserAnswer, Me, User } from '../../src/modules/teams/schema.js';
import { ADMIN_KEY, expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { expectShape } from '../helpers/shape.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('authentication', () => {
  it('answers 401 problem+json without a key or with an unknown key', async () => {
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/me' }), 401);
    const bad = expectProblem(await t.request({ method: 'GET', url: '/api/v1/me', key: 'atr_nope' }), 401);
    expect(bad.code).toBe('invalid_api_key');
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/me', headers: { authorization: 'Basic abc' } }), 401);
  });

  it('tells the caller who they are', async () => {
    const team = await newTeam(t, 'Acme');
    const res = await t.request({ method: 'GET', url: '/api/v1/me', key: team.ownerKey });
    expect(res.statusCode).toBe(200);
    expect(expectShape(Me, res.json())).toMatchObject({
      user: { id: team.ownerId, role: 'owner', instanceAdmin: false },
      team: { id: team.teamId, name: 'Acme' },
    });
  });

  it('bootstraps the instance admin from ADMIN_API_KEY', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/me', key: ADMIN_KEY });
    expect(res.json().user).toMatchObject({ role: 'owner', instanceAdmin: true });
  });
});

describe('teams and users', () => {
  it('only the instance admin creates teams', async () => {
    const made = await t.request({
      method: 'POST',
      url: '/api/v1/teams',
      key: ADMIN_KEY,
      payload: { name: 'Shaped', ownerName: 'O', ownerEmail: `o-${randomUUID()}@example.com` },
    });
    expect(made.statusCode).toBe(201);
    expectShape(CreateTeamAnswer, made.json());
    const team = await newTeam(t);
    const res = await t.request({ method: 'POST', url: '/api/v1/teams', key: team.ownerKey, payload: { name: 'x', ownerName: 'y', ownerEmail: 'y@z.io' } });
    expectProblem(res, 403);
  });

  it('owners create users; members may not; users of another team are invisible', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const member = await a.addUser('member');
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/users', key: member.key, payload: { name: 'n', email: 'n@x.io' } }), 403);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/users', key: member.key }), 403);
    const list = await t.request({ method: 'GET', url: '/api/v1/users', key: a.ownerKey });
    expect(
      expectShape(Type.Array(User), list.json())
        .map((u) => u.id)
        .sort(),
    ).toEqual([a.ownerId, member.id].sort());
    // b cannot delete a's member: 404, not 403
    expectProblem(await t.request({ method: 'DELETE', url: `/api/v1/users/${member.id}`, key: b.ownerKey }), 404);
  });

  it('rejects a duplicate email with 409 and bad input with 400', async () => {
    const a = await newTeam(t);
    const payload = { name: 'Dup', email: 'dup@example.com', role: 'member' };
    const first = await t.request({ method: 'POST', url: '/api/v1/users', key: a.ownerKey, payload });
    expect(first.statusCode).toBe(201);
    expectShape(CreateUserAnswer, first.json());
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/users', key: a.ownerKey, payload: { ...payload, email: 'DUP@example.com' } }), 409);
    const bad = expectProblem(
      await t.request({ method: 'POST', url: '/api/v1/users', key: a.ownerKey, payload: { name: 'x', email: 'no-at', role: 'god' } }),
      400,
    );
    expect((bad.errors as unknown[]).length).toBeGreaterThanOrEqual(2);
  });

  it('a deleted user can no longer authenticate', async () => {
    const a = await newTeam(t);
    const m = await a.addUser('member');
    expect((await t.request({ method: 'GET', url: '/api/v1/me', key: m.key })).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/users/${m.id}`, key: a.ownerKey })).statusCode).toBe(204);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/me', key: m.key }), 401);
    expectProblem(await t.request({ method: 'DELETE', url: '/api/v1/users/abc', key: a.ownerKey }), 400);
  });
});

describe('api keys', () => {
  it('shows a key once, lists it without the secret, and revokes it', async () => {
    const a = await newTeam(t);
    const created = await t.request({ method: 'POST', url: '/api/v1/api-keys', key: a.ownerKey, payload: { name: 'ci' } });
    expect(created.statusCode).toBe(201);
    const { id, key } = expectShape(ApiKey, created.json());
    expect(key).toMatch(/^atr_[A-Za-z0-9_-]{40,}$/);
    expect((await t.request({ method: 'GET', url: '/api/v1/me', key })).statusCode).toBe(200);
    const list = await t.request({ method: 'GET', url: '/api/v1/api-keys', key: a.ownerKey });
    const listed = expectShape(Type.Array(ApiKey), list.json()).find((k) => k.id === id);
    expect(listed).toBeDefined();
    expect(listed!.key).toBeUndefined();
    expect(list.body).not.toContain(key);
    // another user cannot revoke it
    const m = await a.addUser('member');
    expectProblem(await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, key: m.key }), 404);
    expect((await t.request({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, key: a.ownerKey })).statusCode).toBe(204);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/me', key }), 401);
  });
});

describe('errors and documents', () => {
  it('answers malformed JSON, wrong content types, oversized bodies and unknown routes with problem+json', async () => {
    const a = await newTeam(t);
    const malformed = await t.request({
      method: 'POST',
      url: '/api/v1/api-keys',
      key: a.ownerKey,
      headers: { 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expectProblem(malformed, 400);
    expect(malformed.body).not.toMatch(/at .*\.js|SyntaxError/);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/api-keys', key: a.ownerKey, headers: { 'content-type': 'text/xml' }, payload: '<a/>' }), 415);
    const huge = JSON.stringify({ name: 'x'.repeat(2_000_000) });
    expectProblem(
      await t.request({ method: 'POST', url: '/api/v1/api-keys', key: a.ownerKey, headers: { 'content-type': 'application/json' }, payload: huge }),
      413,
    );
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/nothing-here', key: a.ownerKey }), 404);
    expectProblem(
      await t.request({ method: 'POST', url: '/api/v1/api-keys', key: a.ownerKey, headers: { 'content-type': 'application/json' }, payload: 'null' }),
      400,
    );
  });

  it('refuses NUL characters, which PostgreSQL text cannot hold, with 400', async () => {
    const a = await newTeam(t);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/users', key: a.ownerKey, payload: { name: 'n', email: 'a\u0000b@x.io' } }), 400);
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/workspaces', key: a.ownerKey, payload: { name: 'x\u0000y', samplePrompts: ['ok'] } }), 400);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/chat/prompt-logs/paged?q=%00', key: a.ownerKey }), 400);
    expect((await t.request({ method: 'GET', url: '/api/v1/workspaces', key: a.ownerKey })).json()).toEqual([]);
  });

  it('serves health, readiness, OpenAPI 3.1 and docs', async () => {
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
