/**
 * Sign-in through an OpenID provider (docs/API.md, "Sign-in with an identity provider") against a
 * real provider on loopback (test/support/oidc-provider.ts), on the suite's database: people
 * placed in teams with roles by their groups on every sign-in, refused when no group maps, and
 * every callback the provider did not mean for this browser refused — tampered state, replays,
 * another issuer, a token expired or signed with another key.
 */
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OidcConfig } from '../../src/config.js';
import { Me } from '../../src/modules/teams/schema.js';
import { ADMIN_KEY, expectProblem, startTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cookie, login, sessionFrom, setCookieOf } from '../helpers/session.js';
import { expectShape } from '../helpers/shape.js';
import { startTestIdp, type TestIdp } from '../support/oidc-provider.js';

const PUBLIC_URL = 'http://atrium.test';
const CALLBACK = `${PUBLIC_URL}/api/v1/auth/oidc/callback`;
const run = randomUUID().slice(0, 8);
const RESEARCH = `Research ${run}`;
const SALES = `Sales ${run}`;

let idp: TestIdp;
let t: TestApp;

function oidcConfig(over: Partial<OidcConfig> = {}): OidcConfig {
  return {
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    name: 'Test IdP',
    scopes: 'openid email profile',
    groupsClaim: 'groups',
    teamMap: [
      { group: `research-${run}`, team: RESEARCH, role: 'member' },
      { group: `research-leads-${run}`, team: RESEARCH, role: 'admin' },
      { group: `sales-${run}`, team: SALES, role: 'owner' },
    ],
    ...over,
  };
}

const startApp = (over: Partial<OidcConfig> = {}, passwordLogin = true) =>
  startTestApp({ auth: { ...testConfig().auth, publicUrl: PUBLIC_URL, passwordLogin, oidc: oidcConfig(over) } });

beforeAll(async () => {
  idp = await startTestIdp({ redirectUris: [CALLBACK] });
  t = await startApp();
});
afterAll(async () => {
  await t?.close();
  await idp?.close();
});

const rows = async <T>(app: TestApp, query: ReturnType<typeof sql>): Promise<T[]> => ((await app.database.db.execute(query)) as unknown as { rows: T[] }).rows;

/** A person at the provider with a fresh username (identities outlive a test file on a shared PostgreSQL). */
function person(groups: string[], extra: { email?: string | null; emailVerified?: boolean } = {}): string {
  const username = `u-${randomUUID().slice(0, 12)}`;
  idp.accounts.set(username, {
    groups,
    name: `Person ${username}`,
    ...(extra.email === null ? {} : { email: extra.email ?? `${username}@example.com` }),
    ...(extra.emailVerified === undefined ? {} : { emailVerified: extra.emailVerified }),
  });
  return username;
}

/** The app's redirect to the provider and the browser cookie it set. */
async function start(app: TestApp = t): Promise<{ authorizationUrl: string; browser: string }> {
  const res = await app.request({ method: 'GET', url: '/api/v1/auth/oidc/login' });
  expect(res.statusCode, res.body).toBe(302);
  const m = /^atrium_oidc=([A-Za-z0-9_-]+);/.exec(setCookieOf(res));
  expect(m, setCookieOf(res)).not.toBeNull();
  return { authorizationUrl: res.headers.location as string, browser: m![1]! };
}

const callback = (app: TestApp, back: URL, browser: string | null): Promise<LightMyRequestResponse> =>
  app.request({ method: 'GET', url: `${back.pathname}${back.search}`, headers: browser ? { cookie: `atrium_oidc=${browser}` } : {} });

/** The whole sign-in of `username`: the callback's answer. */
async function signIn(username: string, app: TestApp = t): Promise<LightMyRequestResponse> {
  const { authorizationUrl, browser } = await start(app);
  return callback(app, await idp.signIn(authorizationUrl, username), browser);
}

async function me(
  session: string,
  app: TestApp = t,
): Promise<{ user: { id: number; email: string; name: string; role: string }; team: { id: string; name: string } }> {
  const res = await app.request({ method: 'GET', url: '/api/v1/me', headers: cookie(session) });
  expect(res.statusCode, res.body).toBe(200);
  expectShape(Me, res.json());
  return res.json();
}

function refused(res: LightMyRequestResponse, reason: string): void {
  expect(res.statusCode, res.body).toBe(302);
  expect(res.headers.location).toBe(`/?signInError=${reason}`);
  expect(sessionFrom(res)).toBeNull();
}

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

    const methods = await t.request({ method: 'GET', url: '/api/v1/auth/methods' });
    expect(methods.json()).toEqual({ password: true, oidc: { name: 'Test IdP', loginUrl: '/api/v1/auth/oidc/login' } });
  });

  it('creates the user on first sign-in, in the team and with the role their group maps to, and signs them in', async () => {
    const username = person([`research-${run}`, 'unrelated-group']);
    const { authorizationUrl, browser } = await start();
    const state = new URL(authorizationUrl).searchParams.get('state')!;
    const res = await callback(t, await idp.signIn(authorizationUrl, username), browser);
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe('/');
    const session = sessionFrom(res)!;
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(setCookieOf(res)).toContain('HttpOnly');
    expect(setCookieOf(res)).toMatch(/atrium_oidc=; Path=\/api\/v1\/auth\/oidc; .*Max-Age=0/);
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
    const first = await me(sessionFrom(await signIn(username))!);
    expect(first.user.role).toBe('member');

    idp.accounts.get(username)!.groups = [`research-${run}`, `research-leads-${run}`];
    const researchSession = sessionFrom(await signIn(username))!;
    const second = await me(researchSession);
    expect(second.user).toMatchObject({ id: first.user.id, role: 'admin' });
    expect(second.team.id).toBe(first.team.id);

    // Only sales now: a user in Sales as owner, and the Research user removed, its sessions ended.
    idp.accounts.get(username)!.groups = [`sales-${run}`];
    const third = await signIn(username);
    const sales = await me(sessionFrom(third)!);
    expect(sales.team.name).toBe(SALES);
    expect(sales.user.role).toBe('owner');
    expect(sales.user.id).not.toBe(first.user.id);
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/me', headers: cookie(researchSession) }), 401);
    const [removed] = await rows<{ deleted: string | null }>(t, sql`select deleted from users where id = ${first.user.id}`);
    expect(removed!.deleted).not.toBeNull();

    // Back in Research (as well as Sales): the same Research user comes back, signed in there (first in the map's order).
    idp.accounts.get(username)!.groups = [`research-${run}`, `sales-${run}`];
    const both = await me(sessionFrom(await signIn(username))!);
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
    const before = await me(sessionFrom(res)!);
    idp.accounts.get(username)!.groups = [];
    refused(await signIn(username), 'not_mapped');
    expectProblem(await t.request({ method: 'GET', url: '/api/v1/me', headers: cookie(sessionFrom(res)!) }), 401);
    const [row] = await rows<{ deleted: string | null }>(t, sql`select deleted from users where id = ${before.user.id}`);
    expect(row!.deleted).not.toBeNull();
  });

  it('refuses a person the provider sends no email for', async () => {
    refused(await signIn(person([`research-${run}`], { email: null })), 'no_email');
  });

  it('takes over a team user with the same verified email, never one the provider says is unverified', async () => {
    const app = await startApp({ teamMap: [{ group: `adopt-${run}`, team: `Adopt ${run}`, role: 'admin' }] });
    try {
      const made = await app.request({
        method: 'POST',
        url: '/api/v1/teams',
        key: ADMIN_KEY,
        payload: { name: `Adopt ${run}`, ownerName: 'Owner', ownerEmail: `owner-${randomUUID()}@example.com` },
      });
      expect(made.statusCode, made.body).toBe(201);
      const email = `existing-${randomUUID()}@example.com`;
      const user = await app.request({ method: 'POST', url: '/api/v1/users', key: made.json().apiKey, payload: { name: 'Existing', email, role: 'member' } });
      expect(user.statusCode, user.body).toBe(201);
      refused(await signIn(person([`adopt-${run}`], { email, emailVerified: false }), app), 'email_taken');
      const who = await me(sessionFrom(await signIn(person([`adopt-${run}`], { email, emailVerified: true }), app))!, app);
      expect(who.user).toMatchObject({ id: user.json().user.id, role: 'admin' });
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
      const res = await app.request({ method: 'GET', url: '/api/v1/auth/oidc/login' });
      const browser = /^atrium_oidc=([A-Za-z0-9_-]+);/.exec(setCookieOf(res))![1]!;
      const back = await lean.signIn(res.headers.location as string, username);
      const who = await me(sessionFrom(await callback(app, back, browser))!, app);
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
      const who = await me(sessionFrom(await signIn(username, app))!, app);
      expect(who.user).toMatchObject({ email: 'admin@localhost', role: 'owner', instanceAdmin: true });
      idp.accounts.get(username)!.groups = [];
      refused(await signIn(username, app), 'not_mapped');
      const still = await app.request({ method: 'GET', url: '/api/v1/me', key: ADMIN_KEY });
      expect(still.json().user).toMatchObject({ id: who.user.id, role: 'owner', instanceAdmin: true });
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

describe('callbacks that must not sign anyone in', () => {
  it('refuses a tampered state, and a callback without the browser cookie of the sign-in', async () => {
    const username = person([`research-${run}`]);
    const { authorizationUrl, browser } = await start();
    const back = await idp.signIn(authorizationUrl, username);
    const tampered = new URL(back);
    tampered.searchParams.set('state', `${back.searchParams.get('state')}x`);
    refused(await callback(t, tampered, browser), 'failed');
    refused(await callback(t, back, null), 'failed');
    // The other-browser attempt used the state up: the real browser cannot finish it either.
    refused(await callback(t, back, browser), 'failed');
  });

  it('refuses a replayed callback, and a replayed code under a fresh state', async () => {
    const username = person([`research-${run}`]);
    const { authorizationUrl, browser } = await start();
    const back = await idp.signIn(authorizationUrl, username);
    const first = await callback(t, back, browser);
    expect(first.headers.location).toBe('/');
    refused(await callback(t, back, browser), 'failed');

    const fresh = await start();
    const replay = new URL(back);
    replay.searchParams.set('state', new URL(fresh.authorizationUrl).searchParams.get('state')!);
    refused(await callback(t, replay, fresh.browser), 'failed');
  });

  it('refuses what the provider itself refused (error in the callback)', async () => {
    const { authorizationUrl, browser } = await start();
    const back = new URL(CALLBACK);
    back.searchParams.set('error', 'access_denied');
    back.searchParams.set('state', new URL(authorizationUrl).searchParams.get('state')!);
    refused(await callback(t, back, browser), 'denied');
  });

  it('refuses an ID token expired, from another issuer, for another client, with another nonce, or signed with another key', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<NonNullable<TestIdp['tamper']>> = [
      { claims: (c) => ({ ...c, iat: now - 7200, exp: now - 3600 }) },
      { claims: (c) => ({ ...c, iss: 'http://127.0.0.1:1/' }) },
      { claims: (c) => ({ ...c, aud: 'another-client' }) },
      { claims: (c) => ({ ...c, nonce: 'another-nonce' }) },
      { otherKey: true },
    ];
    try {
      for (const tamper of cases) {
        idp.tamper = tamper;
        const username = person([`research-${run}`]);
        refused(await signIn(username), 'failed');
        expect(await rows(t, sql`select 1 from users where email = ${`${username}@example.com`}`)).toHaveLength(0);
      }
    } finally {
      idp.tamper = null;
    }
    // The same provider, untampered, still signs people in.
    expect((await signIn(person([`research-${run}`]))).headers.location).toBe('/');
  });

  it('refuses a provider whose discovery document names another issuer', async () => {
    const app = await startApp({ issuer: idp.issuer.replace('127.0.0.1', 'localhost') });
    try {
      const res = await app.request({ method: 'GET', url: '/api/v1/auth/oidc/login' });
      refused(res, 'unavailable');
    } finally {
      await app.close();
    }
  });

  it("signs people in at once after the provider's keys rotate, and never with a key it does not publish", async () => {
    expect((await signIn(person([`research-${run}`]))).headers.location).toBe('/');
    idp.rotateKeys();
    // The keys were fetched moments ago; the new key id makes them be fetched again.
    expect((await signIn(person([`research-${run}`]))).headers.location).toBe('/');
    expect((await signIn(person([`research-${run}`]))).headers.location).toBe('/');
    // A key id the provider does not publish, even after a fresh fetch: refused.
    idp.tamper = { otherKey: true, kid: 'unpublished' };
    try {
      refused(await signIn(person([`research-${run}`])), 'failed');
    } finally {
      idp.tamper = null;
    }
    expect((await signIn(person([`research-${run}`]))).headers.location).toBe('/');
  });
});

describe('several nodes', () => {
  // On PostgreSQL a second app is a second node over the same database; the embedded database has one process.
  const secondNode = () => (process.env.ATRIUM_TEST_DATABASE_URL ? startApp() : Promise.resolve(null));

  it('finishes on another node a sign-in started on this one, and lets one of two racing callbacks win', async () => {
    const other = await secondNode();
    const node2 = other ?? t;
    try {
      const { authorizationUrl, browser } = await start(t);
      const back = await idp.signIn(authorizationUrl, person([`research-${run}`]));
      const answers = await Promise.all([callback(node2, back, browser), callback(t, back, browser)]);
      const signedIn = answers.filter((a) => a.headers.location === '/');
      expect(signedIn).toHaveLength(1);
      for (const a of answers.filter((x) => x !== signedIn[0])) refused(a, 'failed');
      expect((await me(sessionFrom(signedIn[0]!)!, node2)).team.name).toBe(RESEARCH);
    } finally {
      await other?.close();
    }
  });
});

describe('callbacks of any shape', () => {
  it('answers every malformed callback with the sign-in page and a reason, never an error', async () => {
    const { browser } = await start();
    for (const query of ['', '?state=', '?code=x', `?state=${'s'.repeat(5000)}&code=y`, '?state=a&state=b&code=c', '?state=%E2%82%AC&code=%FF', '?error=x']) {
      const res = await t.request({ method: 'GET', url: `/api/v1/auth/oidc/callback${query}`, headers: { cookie: `atrium_oidc=${browser}` } });
      refused(res, 'failed');
    }
  });
});

describe('PASSWORD_LOGIN=off', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await startApp({}, false);
  });
  afterAll(() => off.close());

  it('refuses password sign-in, invites and password changes; API keys and the identity provider keep working', async () => {
    const methods = await off.request({ method: 'GET', url: '/api/v1/auth/methods' });
    expect(methods.json()).toEqual({ password: false, oidc: { name: 'Test IdP', loginUrl: '/api/v1/auth/oidc/login' } });
    const made = await off.request({
      method: 'POST',
      url: '/api/v1/teams',
      key: ADMIN_KEY,
      payload: { name: `Off ${run}`, ownerName: 'Owner', ownerEmail: `owner-${randomUUID()}@example.com` },
    });
    expect(made.statusCode, made.body).toBe(201);
    const token = new URL(made.json().inviteUrl as string).hash.replace('#token=', '');
    for (const [url, payload] of [
      ['/api/v1/auth/login', { email: 'admin@localhost', password: 'whatever password' }],
      ['/api/v1/auth/check-invite', { token }],
      ['/api/v1/auth/accept-invite', { token, password: 'a new password' }],
    ] as const) {
      const p = expectProblem(await off.request({ method: 'POST', url, payload }), 403);
      expect(p.code, url).toBe('password_login_off');
      expect(p.detail).toContain('Password sign-in is turned off');
    }
    const created = await off.request({
      method: 'POST',
      url: '/api/v1/users',
      key: made.json().apiKey,
      payload: { name: 'P', email: `p-${randomUUID()}@example.com`, role: 'member', password: 'a first password' },
    });
    expect(expectProblem(created, 403).code).toBe('password_login_off');

    const session = sessionFrom(await signIn(person([`research-${run}`]), off))!;
    const change = await off.request({
      method: 'POST',
      url: '/api/v1/me/password',
      headers: { ...cookie(session), origin: 'http://localhost:80' },
      payload: { currentPassword: 'x', newPassword: 'a new password' },
    });
    expect(expectProblem(change, 403).code).toBe('password_login_off');
    expect((await off.request({ method: 'GET', url: '/api/v1/me', key: ADMIN_KEY })).statusCode).toBe(200);
    expect((await login(off, 'admin@localhost', 'whatever password')).statusCode).toBe(403);
  });
});

describe('without OpenID Connect configured', () => {
  it('has no sign-in routes for it, and the sign-in page is told so', async () => {
    const plain = await startTestApp();
    try {
      expect((await plain.request({ method: 'GET', url: '/api/v1/auth/methods' })).json()).toEqual({ password: true, oidc: null });
      expectProblem(await plain.request({ method: 'GET', url: '/api/v1/auth/oidc/login' }), 404);
      expectProblem(await plain.request({ method: 'GET', url: '/api/v1/auth/oidc/callback?code=x&state=y' }), 404);
    } finally {
      await plain.close();
    }
  });
});
