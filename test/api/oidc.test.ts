/**
 * Sign-in through an OpenID provider (docs/API.md, "Sign-in with an identity provider") against a
 * real provider on loopback, on the suite's database: people placed in teams with roles by their
 * groups on every sign-in, refused when no group maps, PASSWORD_LOGIN=off. What must be refused
 * (tampered state, replays, bad tokens, several nodes): oidc-refusals.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from '../helpers/api.js';
import { ADMIN_KEY, expectProblem, startTestApp, testConfig, type TestApp } from '../helpers/app.js';
import {
  callback,
  CALLBACK,
  idp,
  locationOf,
  me,
  oidcConfig,
  person,
  PUBLIC_URL,
  refused,
  RESEARCH,
  rows,
  run,
  SALES,
  signIn,
  start,
  startApp,
  t,
  useOidcSuite,
} from '../helpers/oidc.js';
import { cookie, login, sessionFrom, setCookieOf } from '../helpers/session.js';
import { startTestIdp } from '../support/oidc-provider.js';

useOidcSuite();

describe('OpenID Connect sign-in', () => {
  it('redirects to the provider with code flow, PKCE (S256), state and nonce, and tells the sign-in page', async () => {
    const { authorizationUrl } = await start();
    const url = new URL(authorizationUrl);
    expect(url.origin).toBe(idp.issuer);
    const q = url.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(idp.clientId);
    expect(q.get('redirect_uri')).toBe(CALLBACK);
    expect(q.get('scope')).toBe('openid email profile');
    expect(q.get('code_challenge_method')).toBe('S256');
    for (const p of ['state', 'nonce', 'code_challenge']) expect(q.get(p)?.length, p).toBeGreaterThanOrEqual(32);
    // The state is kept hashed, and in the database (any node may receive the callback).
    const stored = await rows<{ state_hash: string }>(t, sql`select state_hash from oidc_logins`);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.map((r) => r.state_hash)).not.toContain(q.get('state'));

    const methods = expectStatus(await t.api().GET('/api/v1/auth/methods'), 200);
    expect(methods).toEqual({ password: true, oidc: { name: 'Test IdP', loginUrl: '/api/v1/auth/oidc/login' } });
  });

  it('creates the user on first sign-in, in the team and with the role their group maps to, and signs them in', async () => {
    const username = person([`research-${run}`, 'unrelated-group']);
    const { authorizationUrl, browser } = await start();
    const state = new URL(authorizationUrl).searchParams.get('state')!;
    const res = await callback(t, await idp.signIn(authorizationUrl, username), browser);
    expect(res.response.status, JSON.stringify(res.error)).toBe(302);
    expect(locationOf(res)).toBe('/');
    const session = sessionFrom(res.response)!;
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(setCookieOf(res.response)).toContain('HttpOnly');
    expect(setCookieOf(res.response)).toMatch(/atrium_oidc=; Path=\/api\/v1\/auth\/oidc; .*Max-Age=0/);
    const who = await me(session);
    expect(who.user).toMatchObject({ email: `${username}@example.com`, name: `Person ${username}`, role: 'member', instanceAdmin: false });
    expect(who.team.name).toBe(RESEARCH);
    // The sign-in left nothing behind to replay.
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(state).digest('hex');
    expect(await rows(t, sql`select 1 from oidc_logins where state_hash = ${hash}`)).toHaveLength(0);
  });

  it('updates the role from the groups on every sign-in, and moves people between teams', async () => {
    const username = person([`research-${run}`]);
    const first = await me(sessionFrom((await signIn(username)).response)!);
    expect(first.user.role).toBe('member');

    idp.accounts.get(username)!.groups = [`research-${run}`, `research-leads-${run}`];
    const researchSession = sessionFrom((await signIn(username)).response)!;
    const second = await me(researchSession);
    expect(second.user).toMatchObject({ id: first.user.id, role: 'admin' });
    expect(second.team.id).toBe(first.team.id);

    // Only sales now: a user in Sales as owner, and the Research user removed, its sessions ended.
    idp.accounts.get(username)!.groups = [`sales-${run}`];
    const third = await signIn(username);
    const sales = await me(sessionFrom(third.response)!);
    expect(sales.team.name).toBe(SALES);
    expect(sales.user.role).toBe('owner');
    expect(sales.user.id).not.toBe(first.user.id);
    expectProblem(await t.api(null, { headers: cookie(researchSession) }).GET('/api/v1/me'), 401);
    const [removed] = await rows<{ deleted: string | null }>(t, sql`select deleted from users where id = ${first.user.id}`);
    expect(removed!.deleted).not.toBeNull();

    // Back in Research (as well as Sales): the same Research user comes back, signed in there (first in the map's order).
    idp.accounts.get(username)!.groups = [`research-${run}`, `sales-${run}`];
    const both = await me(sessionFrom((await signIn(username)).response)!);
    expect(both.team.name).toBe(RESEARCH);
    expect(both.user).toMatchObject({ id: first.user.id, role: 'member' });
    const live = await rows<{ id: number }>(t, sql`select id from users where id = ${sales.user.id} and deleted is null`);
    expect(live).toHaveLength(1);
  });

  it('refuses a person whose groups map to no team: no user, no session', async () => {
    const username = person(['unrelated-group']);
    refused(await signIn(username), 'not_mapped');
    expect(await rows(t, sql`select 1 from users where email = ${`${username}@example.com`}`)).toHaveLength(0);
  });

  it('removes a person from every team once none of their groups maps, and refuses them', async () => {
    const username = person([`research-${run}`]);
    const res = await signIn(username);
    const before = await me(sessionFrom(res.response)!);
    idp.accounts.get(username)!.groups = [];
    refused(await signIn(username), 'not_mapped');
    expectProblem(await t.api(null, { headers: cookie(sessionFrom(res.response)!) }).GET('/api/v1/me'), 401);
    const [row] = await rows<{ deleted: string | null }>(t, sql`select deleted from users where id = ${before.user.id}`);
    expect(row!.deleted).not.toBeNull();
  });

  it('refuses a person the provider sends no email for', async () => {
    refused(await signIn(person([`research-${run}`], { email: null })), 'no_email');
  });

  it('takes over a team user with the same verified email, never one the provider says is unverified', async () => {
    const app = await startApp({ teamMap: [{ group: `adopt-${run}`, team: `Adopt ${run}`, role: 'admin' }] });
    try {
      const made = expectStatus(
        await app.api(ADMIN_KEY).POST('/api/v1/teams', { body: { name: `Adopt ${run}`, ownerName: 'Owner', ownerEmail: `owner-${randomUUID()}@example.com` } }),
        201,
      );
      const email = `existing-${randomUUID()}@example.com`;
      const user = expectStatus(await app.api(made.apiKey).POST('/api/v1/users', { body: { name: 'Existing', email, role: 'member' } }), 201);
      refused(await signIn(person([`adopt-${run}`], { email, emailVerified: false }), app), 'email_taken');
      const who = await me(sessionFrom((await signIn(person([`adopt-${run}`], { email, emailVerified: true }), app)).response)!, app);
      expect(who.user).toMatchObject({ id: user.user.id, role: 'admin' });
      // Now linked to that identity: a second provider account with the same email cannot take it.
      refused(await signIn(person([`adopt-${run}`], { email }), app), 'email_taken');
    } finally {
      await app.close();
    }
  });
});

describe('a provider that puts the groups in its userinfo answer only', () => {
  it('reads email, name and groups from userinfo', async () => {
    const lean = await startTestIdp({ redirectUris: [CALLBACK], claimsInIdToken: false });
    const app = await startTestApp({
      auth: {
        ...testConfig().auth,
        publicUrl: PUBLIC_URL,
        oidc: { ...oidcConfig(), issuer: lean.issuer, clientId: lean.clientId, clientSecret: lean.clientSecret },
      },
    });
    try {
      const username = `u-${randomUUID().slice(0, 12)}`;
      lean.accounts.set(username, { email: `${username}@example.com`, name: 'Lean Person', groups: [`sales-${run}`] });
      let idToken: Record<string, unknown> = {};
      lean.tamper = { claims: (c) => (idToken = c) }; // re-signed with the provider's own key: only looked at
      const { response } = await app.api().GET('/api/v1/auth/oidc/login');
      const browser = /^atrium_oidc=([A-Za-z0-9_-]+);/.exec(setCookieOf(response))![1]!;
      const back = await lean.signIn(response.headers.get('location')!, username);
      const who = await me(sessionFrom((await callback(app, back, browser)).response)!, app);
      expect(who.user).toMatchObject({ email: `${username}@example.com`, name: 'Lean Person', role: 'owner' });
      expect(who.team.name).toBe(SALES);
      expect(idToken.sub).toBe(username);
      expect(idToken).not.toHaveProperty('groups');
      expect(idToken).not.toHaveProperty('email');
    } finally {
      await app.close();
      await lean.close();
    }
  });
});

describe('the instance admin', () => {
  it('is never demoted nor removed by groups', async () => {
    const app = await startApp({ teamMap: [{ group: `everyone-${run}`, team: 'Default team', role: 'member' }] });
    try {
      const username = `admin-${randomUUID().slice(0, 8)}`;
      idp.accounts.set(username, { email: 'admin@localhost', emailVerified: true, name: 'Admin', groups: [`everyone-${run}`] });
      const who = await me(sessionFrom((await signIn(username, app)).response)!, app);
      expect(who.user).toMatchObject({ email: 'admin@localhost', role: 'owner', instanceAdmin: true });
      idp.accounts.get(username)!.groups = [];
      refused(await signIn(username, app), 'not_mapped');
      const still = expectStatus(await app.api(ADMIN_KEY).GET('/api/v1/me'), 200);
      expect(still.user).toMatchObject({ id: who.user.id, role: 'owner', instanceAdmin: true });
    } finally {
      // The provider is a new one (another issuer) in each run: the link must not outlive this one on a shared PostgreSQL.
      await app.database.db.execute(sql`delete from user_identities where user_id in (select id from users where instance_admin)`);
      await app.close();
    }
  });
});

describe('groups to places', () => {
  it('reads a list, one name or a dotted path, and gives each team the highest role in the map order', async () => {
    const { groupsOf, placesOf } = await import('../../src/modules/teams/oidc-service.js');
    expect(groupsOf({ groups: ['a', 7, 'b'] }, 'groups')).toEqual(['a', 'b']);
    expect(groupsOf({ groups: 'a' }, 'groups')).toEqual(['a']);
    expect(groupsOf({ realm_access: { roles: ['x'] } }, 'realm_access.roles')).toEqual(['x']);
    expect(groupsOf({}, 'groups')).toEqual([]);
    const map = [
      { group: 'b', team: 'B', role: 'member' as const },
      { group: 'a', team: 'A', role: 'member' as const },
      { group: 'a-owners', team: 'A', role: 'owner' as const },
      { group: 'a-admins', team: 'A', role: 'admin' as const },
    ];
    expect(placesOf(['a', 'a-owners', 'a-admins', 'b'], map)).toEqual([
      { team: 'B', role: 'member' },
      { team: 'A', role: 'owner' },
    ]);
    expect(placesOf(['c'], map)).toEqual([]);
  });
});

describe('PASSWORD_LOGIN=off', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await startApp({}, false);
  });
  afterAll(() => off.close());

  it('refuses password sign-in, invites and password changes; API keys and the identity provider keep working', async () => {
    const methods = expectStatus(await off.api().GET('/api/v1/auth/methods'), 200);
    expect(methods).toEqual({ password: false, oidc: { name: 'Test IdP', loginUrl: '/api/v1/auth/oidc/login' } });
    const made = expectStatus(
      await off.api(ADMIN_KEY).POST('/api/v1/teams', { body: { name: `Off ${run}`, ownerName: 'Owner', ownerEmail: `owner-${randomUUID()}@example.com` } }),
      201,
    );
    const token = new URL(made.inviteUrl!).hash.replace('#token=', '');
    const anonymous = off.api();
    for (const [url, answer] of [
      ['/api/v1/auth/login', await anonymous.POST('/api/v1/auth/login', { body: { email: 'admin@localhost', password: 'whatever password' } })],
      ['/api/v1/auth/check-invite', await anonymous.POST('/api/v1/auth/check-invite', { body: { token } })],
      ['/api/v1/auth/accept-invite', await anonymous.POST('/api/v1/auth/accept-invite', { body: { token, password: 'a new password' } })],
    ] as const) {
      const p = expectProblem(answer, 403);
      expect(p.code, url).toBe('password_login_off');
      expect(p.detail).toContain('Password sign-in is turned off');
    }
    const created = await off
      .api(made.apiKey)
      .POST('/api/v1/users', { body: { name: 'P', email: `p-${randomUUID()}@example.com`, role: 'member', password: 'a first password' } });
    expect(expectProblem(created, 403).code).toBe('password_login_off');

    const session = sessionFrom((await signIn(person([`research-${run}`]), off)).response)!;
    const change = await off
      .api(null, { headers: { ...cookie(session), origin: 'http://localhost:80' } })
      .POST('/api/v1/me/password', { body: { currentPassword: 'x', newPassword: 'a new password' } });
    expect(expectProblem(change, 403).code).toBe('password_login_off');
    expectStatus(await off.api(ADMIN_KEY).GET('/api/v1/me'), 200);
    expect((await login(off, 'admin@localhost', 'whatever password')).statusCode).toBe(403);
  });
});

describe('without OpenID Connect configured', () => {
  it('has no sign-in routes for it, and the sign-in page is told so', async () => {
    const plain = await startTestApp();
    try {
      expect(expectStatus(await plain.api().GET('/api/v1/auth/methods'), 200)).toEqual({ password: true, oidc: null });
      expectProblem(await plain.api().GET('/api/v1/auth/oidc/login'), 404);
      expectProblem(await callback(plain, '?code=x&state=y', null), 404);
    } finally {
      await plain.close();
    }
  });
});
