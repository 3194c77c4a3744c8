/**
 * SCIM 2.0 provisioning with the requests identity providers send (Okta's and Microsoft Entra's
 * shapes): create, find by userName, replace, patch, deactivate (which ends sessions and keys at
 * once), role groups, the token's reach, and errors in SCIM's shape.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { expectStatus } from '../helpers/api.js';
import { cookie, signedInUser } from '../helpers/session.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const SCIM = 'application/scim+json';

async function scimToken(team: TeamFixture): Promise<string> {
  return expectStatus(await t.api(team.ownerKey).POST('/api/v1/scim/token'), 201).token;
}

const me = (key: string) => t.api(key).GET('/api/v1/me');
const meBySession = (session: string) => t.api(null, { headers: cookie(session) }).GET('/api/v1/me');
const signIn = (email: string, password: string) => t.api().POST('/api/v1/auth/login', { body: { email, password } });
const teamUsers = async (key: string) => expectStatus(await t.api(key).GET('/api/v1/users'), 200);

// raw: the SCIM endpoints (/scim/v2) are not in the OpenAPI document
function scim(token: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: object) {
  return t.request({
    method,
    url: `/scim/v2${url}`,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': SCIM } : {}) },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  });
}

const oktaUser = (email: string, active = true) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName: email,
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ primary: true, value: email, type: 'work' }],
  displayName: 'Ada Lovelace',
  active,
});

describe('SCIM users', () => {
  it('creates, finds by userName, replaces and patches a user, in SCIM shapes', async () => {
    const team = await newTeam(t);
    const token = await scimToken(team);
    const email = `ada-${randomUUID()}@example.com`;
    // Okta first looks the user up, then creates them.
    const none = await scim(token, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}&startIndex=1&count=100`);
    expect(none.statusCode).toBe(200);
    expect(none.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(none.json()).toMatchObject({ totalResults: 0, Resources: [] });
    const made = await scim(token, 'POST', '/Users', oktaUser(email));
    expect(made.statusCode, made.body).toBe(201);
    const user = made.json();
    expect(user).toMatchObject({ userName: email, displayName: 'Ada Lovelace', active: true, emails: [{ value: email, primary: true }] });
    expect(made.headers.location).toBe(`/scim/v2/Users/${user.id}`);
    const found = (await scim(token, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${email.toUpperCase()}"`)}`)).json();
    expect(found.Resources.map((u: { id: string }) => u.id)).toEqual([user.id]);
    // The user is a member of the team.
    const users = await teamUsers(team.ownerKey);
    expect(users.find((u) => String(u.id) === user.id)).toMatchObject({ role: 'member', name: 'Ada Lovelace', email });

    const replaced = await scim(token, 'PUT', `/Users/${user.id}`, { ...oktaUser(email), displayName: 'Ada King', name: { formatted: 'Ada King' } });
    expect(replaced.json()).toMatchObject({ displayName: 'Ada King' });
    // Entra sends path/value pairs, booleans as strings.
    const patched = await scim(token, 'PATCH', `/Users/${user.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'Replace', path: 'displayName', value: 'Countess Ada' }],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().displayName).toBe('Countess Ada');
    expect((await scim(token, 'POST', '/Users', oktaUser(email))).json()).toMatchObject({ status: '409', scimType: 'uniqueness' });
  });

  it('deactivation ends the person’s sessions and API keys at once; reactivation lets them sign in again', async () => {
    const team = await newTeam(t);
    const token = await scimToken(team);
    const person = await signedInUser(t, team, 'member', 'deactivate me 12345');
    expect((await me(person.key)).response.status).toBe(200);
    expect((await meBySession(person.session)).response.status).toBe(200);
    // Okta deactivates with a path-less replace.
    const off = await scim(token, 'PATCH', `/Users/${person.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().active).toBe(false);
    expectProblem(await me(person.key), 401);
    expectProblem(await meBySession(person.session), 401);
    expect((await signIn(person.email, person.password)).response.status).toBe(401);
    expect((await scim(token, 'GET', `/Users/${person.id}`)).json().active).toBe(false);
    const audit = expectStatus(await t.api(team.ownerKey).GET('/api/v1/audit', { params: { query: { action: 'user.update' } } }), 200).content;
    expect(audit[0]).toMatchObject({ target: { id: String(person.id) }, actor: { userId: null }, details: { active: false, via: 'scim' } });

    const on = await scim(token, 'PATCH', `/Users/${person.id}`, { Operations: [{ op: 'Replace', path: 'active', value: 'True' }] });
    expect(on.json().active).toBe(true);
    expect((await signIn(person.email, person.password)).response.status).toBe(200);
    // Its keys stay revoked.
    expectProblem(await me(person.key), 401);
    // DELETE deactivates as well.
    expect((await scim(token, 'DELETE', `/Users/${person.id}`)).statusCode).toBe(204);
    expect((await scim(token, 'GET', `/Users/${person.id}`)).json().active).toBe(false);
  });

  it('groups are the roles: adding a member to admin makes them an admin, removing makes them a member', async () => {
    const team = await newTeam(t);
    const token = await scimToken(team);
    const m = await team.addUser('member');
    const groups = (await scim(token, 'GET', '/Groups')).json();
    expect(groups.Resources.map((g: { id: string }) => g.id)).toEqual(['owner', 'admin', 'member']);
    const add = await scim(token, 'PATCH', '/Groups/admin', { Operations: [{ op: 'add', path: 'members', value: [{ value: String(m.id) }] }] });
    expect(add.statusCode, add.body).toBe(200);
    expect(add.json().members).toEqual([{ value: String(m.id), display: 'member user' }]);
    expect((await me(m.key)).data!.user.role).toBe('admin');
    await scim(token, 'PATCH', '/Groups/admin', { Operations: [{ op: 'remove', path: `members[value eq "${m.id}"]` }] });
    expect((await me(m.key)).data!.user.role).toBe('member');
  });
});

describe('SCIM token and errors', () => {
  it('a token reaches its own team only; API keys and bad tokens are refused; only an owner makes one; a new one replaces the old', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const tokenA = await scimToken(a);
    const theirs = await b.addUser('member');
    const res = await scim(tokenA, 'GET', `/Users/${theirs.id}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404' });
    expect((await scim(tokenA, 'PATCH', `/Users/${theirs.id}`, { Operations: [{ op: 'replace', value: { active: false } }] })).statusCode).toBe(404);
    expect((await me(theirs.key)).response.status).toBe(200);
    const list = (await scim(tokenA, 'GET', '/Users')).json();
    expect(list.Resources.every((u: { id: string }) => u.id !== String(theirs.id))).toBe(true);
    expect((await scim(a.ownerKey, 'GET', '/Users')).statusCode).toBe(401);
    expect((await scim('scim_nonsense', 'GET', '/Users')).json()).toMatchObject({ status: '401' });
    const admin = await a.addUser('admin');
    expectProblem(await t.api(admin.key).POST('/api/v1/scim/token'), 403);
    const again = await scimToken(a);
    expect((await scim(tokenA, 'GET', '/Users')).statusCode).toBe(401);
    expect((await scim(again, 'GET', '/Users')).statusCode).toBe(200);
  });

  it('bad input is a 400 in SCIM shape and changes nothing', async () => {
    const team = await newTeam(t);
    const token = await scimToken(team);
    const bad = [
      await scim(token, 'GET', '/Users?filter=name co "x"'),
      await scim(token, 'POST', '/Users', { userName: '' }),
      await scim(token, 'POST', '/Users', { ...oktaUser(`x-${randomUUID()}@example.com`), active: 'maybe' }),
      await scim(token, 'PATCH', '/Users/1', { Operations: [] }),
      // raw: SCIM is not in the document, and this body is not JSON
      await t.request({ method: 'POST', url: '/scim/v2/Users', headers: { authorization: `Bearer ${token}`, 'content-type': SCIM }, payload: '{not json' }),
    ];
    for (const r of bad) {
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json().schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);
    }
    expect((await scim(token, 'GET', '/Users/abc')).statusCode).toBe(404);
    expect((await scim(token, 'GET', '/Nope')).statusCode).toBe(404);
    expect(await teamUsers(team.ownerKey)).toHaveLength(1);
  });
});

describe('SCIM guards', () => {
  it('never removes the last owner, by deactivation or by group', async () => {
    const team = await newTeam(t);
    const token = await scimToken(team);
    const off = await scim(token, 'PATCH', `/Users/${team.ownerId}`, { Operations: [{ op: 'replace', value: { active: false } }] });
    expect(off.json()).toMatchObject({ status: '409' });
    const demote = await scim(token, 'PATCH', '/Groups/owner', { Operations: [{ op: 'remove', path: `members[value eq "${team.ownerId}"]` }] });
    expect(demote.json()).toMatchObject({ status: '409' });
    expect((await me(team.ownerKey)).data!.user.role).toBe('owner');
    const second = await team.addUser('owner');
    expect((await scim(token, 'DELETE', `/Users/${team.ownerId}`)).statusCode).toBe(204);
    expect((await me(second.key)).response.status).toBe(200);
  });
});
