/** PATCH /api/v1/users/{userId}: changing a user's role (web app's Team screen). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { User } from '../../src/modules/teams/schema.js';
import { expectStatus } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { expectShape } from '../helpers/shape.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const setRole = (key: string, userId: number, body: { role: 'owner' | 'admin' | 'member' }) =>
  t.api(key).PATCH('/api/v1/users/{userId}', { params: { path: { userId } }, body });
/** A PATCH the document cannot type (a role or a field it lacks, a user id that is no number). */
const setRoleRaw = (key: string, userId: number | string, payload: Record<string, unknown>) =>
  t.request({ method: 'PATCH', url: `/api/v1/users/${userId}`, key, payload }); // raw: invalid on purpose
const roleOf = async (key: string) => expectStatus(await t.api(key).GET('/api/v1/me'), 200).user.role;

describe('changing a role', () => {
  it('an owner promotes a member to admin and back; the new role applies to their next call', async () => {
    const a = await newTeam(t);
    const m = await a.addUser('member');
    expectProblem(await t.api(m.key).GET('/api/v1/users'), 403);
    const up = await setRole(a.ownerKey, m.id, { role: 'admin' });
    expect(up.response.status).toBe(200);
    expect(expectShape(User, up.data)).toMatchObject({ id: m.id, role: 'admin' });
    expect(await roleOf(m.key)).toBe('admin');
    expect((await t.api(m.key).GET('/api/v1/users')).response.status).toBe(200);
    const down = await setRole(a.ownerKey, m.id, { role: 'member' });
    expect(down.data?.role).toBe('member');
    expect(await roleOf(m.key)).toBe('member');
  });

  it('an owner makes another owner; an admin may not grant or remove owner', async () => {
    const a = await newTeam(t);
    const admin = await a.addUser('admin');
    const m = await a.addUser('member');
    expectProblem(await setRole(admin.key, m.id, { role: 'owner' }), 403);
    expectProblem(await setRole(admin.key, a.ownerId, { role: 'member' }), 403);
    expect(await roleOf(m.key)).toBe('member');
    expect(await roleOf(a.ownerKey)).toBe('owner');
    expect((await setRole(admin.key, m.id, { role: 'admin' })).data?.role).toBe('admin');
    expect((await setRole(a.ownerKey, m.id, { role: 'owner' })).data?.role).toBe('owner');
  });

  it('nobody changes their own role, members change none, other teams see no user', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const m = await a.addUser('member');
    const other = await a.addUser('member');
    expect(expectProblem(await setRole(a.ownerKey, a.ownerId, { role: 'member' }), 409).code).toBe('cannot_change_own_role');
    expectProblem(await setRole(m.key, other.id, { role: 'admin' }), 403);
    expectProblem(await setRole(m.key, m.id, { role: 'admin' }), 403);
    expectProblem(await setRole(b.ownerKey, m.id, { role: 'admin' }), 404);
    expect(await roleOf(m.key)).toBe('member');
    expect(await roleOf(other.key)).toBe('member');
  });

  it('refuses bad input with 400 and an unknown user with 404', async () => {
    const a = await newTeam(t);
    const m = await a.addUser('member');
    expectProblem(await setRoleRaw(a.ownerKey, m.id, { role: 'king' }), 400);
    expectProblem(await setRoleRaw(a.ownerKey, m.id, {}), 400);
    expectProblem(await setRoleRaw(a.ownerKey, m.id, { role: 'admin', name: 'x' }), 400);
    expectProblem(await setRoleRaw(a.ownerKey, 'abc', { role: 'admin' }), 400);
    expectProblem(await setRole(a.ownerKey, 2147483647, { role: 'admin' }), 404);
    expect(await roleOf(m.key)).toBe('member');
  });
});
