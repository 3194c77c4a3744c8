/**
 * Sign-in and sessions (docs/API.md "Sign-in and sessions"), over HTTP on the
 * suite's database: cookie and key side by side, CSRF, logout, revocation (on this node and on
 * another), expiry and its sliding, invites, password change, and the login throttle.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { CreateUserAnswer, Me } from '../../src/modules/teams/schema.js';
import { expectProblem, newTeam, startTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { createWorkspace } from '../helpers/factories.js';
import { cookie, login, randomAddress, SAME_ORIGIN, sessionFrom, setCookieOf, signedInUser } from '../helpers/session.js';
import { expectShape } from '../helpers/shape.js';
import { apiClient, expectStatus } from '../helpers/api.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** GET /api/v1/me with a session cookie (and a Bearer key when given). */
const meBySession = (session: string, key?: string) => t.api(key, { headers: cookie(session) }).GET('/api/v1/me');
const newUser = (key: string, body: { name: string; email: string; password?: string }) => t.api(key).POST('/api/v1/users', { body });
const acceptInvite = (token: string, password: string) => t.api().POST('/api/v1/auth/accept-invite', { body: { token, password } });
const inviteToken = (inviteUrl: string | null | undefined) => inviteUrl!.split('#token=')[1]!;

const rows = async <T>(query: ReturnType<typeof sql>): Promise<T[]> => {
  const res = (await t.database.db.execute(query)) as unknown as { rows: T[] };
  return res.rows;
};

describe('sign-in', () => {
  it('answers {user, team} and sets an HttpOnly, SameSite=Lax session cookie that every route accepts', async () => {
    const team = await newTeam(t, 'Signers');
    const u = await signedInUser(t, team, 'admin');
    const res = await login(t, u.email.toUpperCase(), u.password);
    expect(res.statusCode).toBe(200);
    const me = expectShape(Me, res.json());
    expect(me).toMatchObject({ user: { id: u.id, email: u.email, role: 'admin', instanceAdmin: false }, team: { id: team.teamId, name: 'Signers' } });
    const set = setCookieOf(res);
    expect(set).toMatch(/^atrium_session=[A-Za-z0-9_-]{43}; /);
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Lax');
    expect(set).toContain('Path=/');
    expect(set).toContain(`Max-Age=${14 * 86_400}`);
    expect(set).not.toContain('Secure'); // plain HTTP, no trusted proxy
    // The cookie and the key both work, on several routes.
    const byCookie = t.api(null, { headers: cookie(sessionFrom(res)!) });
    const byKey = t.api(u.key);
    for (const url of ['/api/v1/me', '/api/v1/workspaces', '/api/v1/models', '/api/v1/api-keys'] as const) {
      const [viaCookie, viaKey] = [await byCookie.GET(url), await byKey.GET(url)];
      expect(viaCookie.response.status, url).toBe(200);
      expect(viaKey.response.status, url).toBe(200);
      expect(viaCookie.data).toEqual(viaKey.data);
    }
    // The database keeps a hash of the cookie, not the cookie.
    const stored = await rows<{ token_hash: string }>(sql`select token_hash from sessions where user_id = ${u.id}`);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.map((r) => r.token_hash)).not.toContain(sessionFrom(res));
  });

  it('answers an unknown email and a wrong password with the same 401', async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    const wrong = expectProblem(await login(t, u.email, 'not the password'), 401);
    const unknown = expectProblem(await login(t, `nobody-${randomUUID()}@example.com`, 'not the password'), 401);
    expect(wrong).toEqual(unknown);
    expect(wrong.code).toBe('invalid_credentials');
    // A user who never set a password (invited) cannot sign in either, with the same answer.
    const invited = expectStatus(await newUser(team.ownerKey, { name: 'I', email: `i-${randomUUID()}@example.com` }), 201);
    expect(expectProblem(await login(t, invited.user.email, 'anything at all'), 401)).toEqual(unknown);
    // raw: a sign-in without a password, which the document does not allow
    expectProblem(await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: u.email } }), 400);
    expectProblem(await t.api().POST('/api/v1/auth/login', { body: { email: u.email, password: 'x'.repeat(1025) } }), 400);
  });

  it('prefers the Bearer key when both a key and a cookie are sent, and refuses a bad cookie with 401', async () => {
    const team = await newTeam(t);
    const a = await signedInUser(t, team);
    const b = await signedInUser(t, team);
    const both = await meBySession(a.session, b.key);
    expect(both.data!.user.id).toBe(b.id);
    const bad = expectProblem(await meBySession('A'.repeat(43)), 401);
    expect(bad.code).toBe('session_ended');
    // A bad key is refused even beside a good cookie: Bearer decides.
    expectProblem(await meBySession(a.session, 'atr_nope'), 401);
    expectProblem(await t.api(null, { headers: { cookie: 'other=1; atrium_session=' } }).GET('/api/v1/me'), 401);
  });
});

describe('CSRF', () => {
  it('refuses a cookie-authenticated change from another origin or without one, and allows the same origin', async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team, 'admin');
    const create = (headers: Record<string, string>, key?: string) =>
      t.api(key, { headers }).POST('/api/v1/workspaces', { body: { name: `ws-${randomUUID().slice(0, 6)}` } });
    const foreign = expectProblem(await create({ ...cookie(u.session), origin: 'https://evil.example' }), 403);
    expect(foreign.code).toBe('csrf');
    expect(expectProblem(await create(cookie(u.session)), 403).code).toBe('csrf');
    expect(expectProblem(await create({ ...cookie(u.session), origin: 'null' }), 403).code).toBe('csrf');
    expect(expectProblem(await create({ ...cookie(u.session), 'sec-fetch-site': 'cross-site', origin: 'http://localhost.evil.example' }), 403).code).toBe(
      'csrf',
    );
    // nothing was stored by the refused requests
    const list = await t.api(u.key).GET('/api/v1/workspaces');
    expect(list.data).toEqual([]);
    expect((await create({ ...cookie(u.session), ...SAME_ORIGIN })).response.status).toBe(200);
    expect((await create({ ...cookie(u.session), 'sec-fetch-site': 'same-origin' })).response.status).toBe(200);
    // A key needs no Origin, and a foreign one does not matter to it.
    expect((await create({}, u.key)).response.status).toBe(200);
    expect((await create({ origin: 'https://evil.example' }, u.key)).response.status).toBe(200);
    // DELETE too; GET is safe and needs no Origin.
    const ws = await createWorkspace(t, u.key);
    const at = { params: { path: { workspaceId: ws.id } } };
    const foreignDelete = await t
      .api(null, { headers: { ...cookie(u.session), origin: 'https://evil.example' } })
      .DELETE('/api/v1/workspaces/{workspaceId}', at);
    expect(expectProblem(foreignDelete, 403).code).toBe('csrf');
    expect((await t.api(null, { headers: cookie(u.session) }).GET('/api/v1/workspaces/{workspaceId}', at)).response.status).toBe(200);
  });

  it('refuses a sign-in posted from another origin (login CSRF) and accepts one from its own', async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    const post = (headers: Record<string, string>) =>
      t.api(null, { headers, remoteAddress: randomAddress() }).POST('/api/v1/auth/login', { body: { email: u.email, password: u.password } });
    expect(expectProblem(await post({ origin: 'https://evil.example' }), 403).code).toBe('csrf');
    expect((await post(SAME_ORIGIN)).response.status).toBe(200);
  });
});

describe('ending sessions', () => {
  it('logout ends the session and removes the cookie', async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    const other = await login(t, u.email, u.password); // a second session (another browser)
    const logout = (headers: Record<string, string> = {}) => t.api(null, { headers }).POST('/api/v1/auth/logout');
    expectProblem(await logout({ ...cookie(u.session), origin: 'https://evil.example' }), 403);
    const out = await logout({ ...cookie(u.session), ...SAME_ORIGIN });
    expect(out.response.status).toBe(204);
    expect(setCookieOf(out.response)).toMatch(/^atrium_session=; .*Max-Age=0/);
    expectProblem(await meBySession(u.session), 401);
    // the other session and the key are untouched
    expect((await meBySession(sessionFrom(other)!)).response.status).toBe(200);
    expect((await t.api(u.key).GET('/api/v1/me')).response.status).toBe(200);
    // logging out without a session is harmless
    expect((await logout()).response.status).toBe(204);
  });

  it("refuses a deleted user's session at once", async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    expect((await meBySession(u.session)).response.status).toBe(200);
    expect((await t.api(team.ownerKey).DELETE('/api/v1/users/{userId}', { params: { path: { userId: u.id } } })).response.status).toBe(204);
    expect(expectProblem(await meBySession(u.session), 401).code).toBe('session_ended');
    expectProblem(await login(t, u.email, u.password), 401);
  });

  it("refuses a user's session on this node at once when another node deleted them", async () => {
    // Another node on the same database: on PostgreSQL its own pool; on PGlite the same handle (one process).
    const shared = process.env.ATRIUM_TEST_DATABASE_URL ? undefined : { ...t.database, close: async () => {} };
    const other = await buildApp(testConfig(), { logger: false, ...(shared ? { database: shared } : {}) });
    try {
      const team = await newTeam(t);
      const u = await signedInUser(t, team);
      // both nodes accept the session
      expect((await meBySession(u.session)).response.status).toBe(200);
      expect((await apiClient(other.app, null, { headers: cookie(u.session) }).GET('/api/v1/me')).response.status).toBe(200);
      const del = await apiClient(other.app, team.ownerKey).DELETE('/api/v1/users/{userId}', { params: { path: { userId: u.id } } });
      expect(del.response.status).toBe(204);
      expectProblem(await meBySession(u.session), 401);
      // and a logout on one node ends the session on the other
      const v = await signedInUser(t, team);
      const out = await apiClient(other.app, null, { headers: { ...cookie(v.session), ...SAME_ORIGIN } }).POST('/api/v1/auth/logout');
      expect(out.response.status).toBe(204);
      expectProblem(await meBySession(v.session), 401);
    } finally {
      await other.app.close();
    }
  });

  it('refuses an expired session', async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    await t.database.db.execute(sql`update sessions set expires = now() - interval '1 second' where user_id = ${u.id}`);
    expect(expectProblem(await meBySession(u.session), 401).code).toBe('session_ended');
  });

  it('slides the expiry forward with use, and sends the cookie again', async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    // A fresh session is not rewritten on every request...
    const fresh = await meBySession(u.session);
    expect(fresh.response.status).toBe(200);
    expect(fresh.response.headers.get('set-cookie')).toBeNull();
    // ...but one with an hour left (as if used 14 days ago) is extended to the full TTL.
    await t.database.db.execute(sql`update sessions set expires = now() + interval '1 hour' where user_id = ${u.id}`);
    const used = (await meBySession(u.session)).response;
    expect(used.status).toBe(200);
    const maxAge = Number(/Max-Age=(\d+)/.exec(setCookieOf(used))?.[1]);
    expect(maxAge).toBeGreaterThan(14 * 86_400 - 120);
    expect(sessionFrom(used)).toBe(u.session);
    const [row] = await rows<{ left: number }>(sql`select extract(epoch from expires - now())::int as left from sessions where user_id = ${u.id}`);
    expect(Number(row!.left)).toBeGreaterThan(14 * 86_400 - 120);
  });
});

describe('invites and passwords', () => {
  it('answers an invite link for a user created without a password; it sets the password once and signs in', async () => {
    const team = await newTeam(t);
    const email = `inv-${randomUUID()}@example.com`;
    const made = expectStatus(await newUser(team.ownerKey, { name: 'Invited', email }), 201);
    const body = expectShape(CreateUserAnswer, made);
    expect(body.inviteUrl).toMatch(/^http:\/\/localhost:80\/invite#token=[A-Za-z0-9_-]{43}$/);
    const token = body.inviteUrl!.split('#token=')[1]!;
    // only the hash is stored
    const stored = await rows<{ token_hash: string }>(sql`select token_hash from user_invites where user_id = ${made.user.id}`);
    expect(stored.map((r) => r.token_hash)).not.toContain(token);

    expectProblem(await acceptInvite(token, 'short'), 400);
    const accepted = await acceptInvite(token, 'a long enough password');
    expect(expectShape(Me, expectStatus(accepted, 200)).user.id).toBe(made.user.id);
    const session = sessionFrom(accepted.response)!;
    expect((await meBySession(session)).data!.user.email).toBe(email);
    expect((await login(t, email, 'a long enough password')).statusCode).toBe(200);
    // one use
    const again = expectProblem(await acceptInvite(token, 'another password'), 400);
    expect(again.code).toBe('invalid_invite');
    expectProblem(await login(t, email, 'another password'), 401);
    expect(again.detail).toContain('already been used');
    // an unknown token: the same code, in words that say it is not valid
    const wrong = expectProblem(await acceptInvite('A'.repeat(43), 'another password'), 400);
    expect(wrong.code).toBe('invalid_invite');
    expect(wrong.detail).toContain('not valid');
  });

  it('tells the holder of an invite whom it is for, and why it can no longer be used, without using it up', async () => {
    const team = await newTeam(t, 'Checkers');
    const email = `chk-${randomUUID()}@example.com`;
    const made = await newUser(team.ownerKey, { name: 'Checked', email });
    const token = inviteToken(made.data!.inviteUrl);
    const check = (body: { token: string }, headers: Record<string, string> = {}) => t.api(null, { headers }).POST('/api/v1/auth/check-invite', { body });
    // raw: bodies the document does not allow (no token, an unknown field)
    const checkRaw = (payload: object) => t.request({ method: 'POST', url: '/api/v1/auth/check-invite', payload });
    const info = expectStatus(await check({ token }), 200);
    expect(info).toEqual({ user: { name: 'Checked', email }, team: { name: 'Checkers' } });
    // Another team's signed-in user asking gets the invite's person, never their own: the token decides.
    const other = await signedInUser(t, await newTeam(t, 'Elsewhere'));
    expect((await check({ token }, cookie(other.session))).data).toEqual(info);
    // checking twice changes nothing; the invite still works once
    expect((await check({ token })).response.status).toBe(200);
    expect((await acceptInvite(token, 'a long enough password')).response.status).toBe(200);
    const used = expectProblem(await check({ token }), 400);
    expect(used.code).toBe('invalid_invite');
    expect(used.detail).toContain('already been used');
    expect(used.detail).toContain("ask your team's admin for a new invite");
    expect(expectProblem(await check({ token: 'B'.repeat(43) }), 400).detail).toContain('not valid');
    // bad input
    expectProblem(await checkRaw({}), 400);
    expectProblem(await check({ token: '' }), 400);
    expectProblem(await check({ token: 'x'.repeat(201) }), 400);
    expectProblem(await checkRaw({ token, extra: 1 }), 400);
  });

  it('refuses an expired invite, and an invite of a deleted user', async () => {
    const team = await newTeam(t);
    const a = (await newUser(team.ownerKey, { name: 'A', email: `a-${randomUUID()}@example.com` })).data!;
    await t.database.db.execute(sql`update user_invites set expires = now() - interval '1 second' where user_id = ${a.user.id}`);
    const tokenA = inviteToken(a.inviteUrl);
    const expired = expectProblem(await acceptInvite(tokenA, 'a long enough password'), 400);
    expect(expired.code).toBe('invalid_invite');
    expect(expired.detail).toContain('expired');
    expect(expectProblem(await t.api().POST('/api/v1/auth/check-invite', { body: { token: tokenA } }), 400).detail).toContain('expired');
    const b = (await newUser(team.ownerKey, { name: 'B', email: `b-${randomUUID()}@example.com` })).data!;
    await t.api(team.ownerKey).DELETE('/api/v1/users/{userId}', { params: { path: { userId: b.user.id } } });
    const tokenB = inviteToken(b.inviteUrl);
    expect(expectProblem(await acceptInvite(tokenB, 'a long enough password'), 400).code).toBe('invalid_invite');
  });

  it('takes a first password at creation (at least 8 characters) instead of an invite', async () => {
    const team = await newTeam(t);
    const email = `p-${randomUUID()}@example.com`;
    const short = expectProblem(await newUser(team.ownerKey, { name: 'P', email, password: '1234567' }), 400);
    expect(JSON.stringify(short.errors)).toContain('password');
    // nothing was stored: the same email can be created afterwards
    const made = expectStatus(await newUser(team.ownerKey, { name: 'P', email, password: '12345678' }), 201);
    expect(made.inviteUrl).toBeNull();
    expect((await login(t, email, '12345678')).statusCode).toBe(200);
    // a new team's owner gets an invite link
    const teamRes = await t
      .api('atr_test_instance_admin_key_0123456789')
      .POST('/api/v1/teams', { body: { name: 'T', ownerName: 'O', ownerEmail: `o-${randomUUID()}@example.com` } });
    expect(teamRes.data!.inviteUrl).toMatch(/\/invite#token=/);
  });

  it("changes one's own password: the current one is checked, other sessions end, this one stays", async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    const elsewhere = sessionFrom(await login(t, u.email, u.password))!;
    type PasswordChange = { currentPassword: string; newPassword: string };
    const change = (body: PasswordChange, key?: string, headers: Record<string, string> = { ...cookie(u.session), ...SAME_ORIGIN }) =>
      t.api(key, { headers }).POST('/api/v1/me/password', { body });
    expect(expectProblem(await change({ currentPassword: 'wrong password', newPassword: 'brand new password' }), 400).code).toBe('wrong_password');
    expectProblem(await change({ currentPassword: u.password, newPassword: 'short' }), 400);
    expect(expectProblem(await change({ currentPassword: u.password, newPassword: 'brand new password' }, undefined, cookie(u.session)), 403).code).toBe(
      'csrf',
    );
    expect((await change({ currentPassword: u.password, newPassword: 'brand new password' })).response.status).toBe(204);
    expectProblem(await login(t, u.email, u.password), 401);
    expect((await login(t, u.email, 'brand new password')).statusCode).toBe(200);
    expect((await meBySession(u.session)).response.status).toBe(200);
    expectProblem(await meBySession(elsewhere), 401);
    // with an API key: works the same, and the key keeps working
    const byKey = await change({ currentPassword: 'brand new password', newPassword: 'third password here' }, u.key, {});
    expect(byKey.response.status).toBe(204);
    expectProblem(await meBySession(u.session), 401);
    expect((await t.api(u.key).GET('/api/v1/me')).response.status).toBe(200);
  });
});

describe('behind a trusted proxy, with tight sign-in limits', () => {
  let p: TestApp;
  beforeAll(async () => {
    p = await startTestApp({ auth: { ...testConfig().auth, trustProxy: 1, maxFailuresPerEmail: 5, maxFailuresPerAddress: 8 } });
  }, 120_000);
  afterAll(() => p.close());

  it('marks the cookie Secure when the request came over HTTPS (X-Forwarded-Proto believed only from a trusted proxy)', async () => {
    const team = await newTeam(p);
    const u = await signedInUser(p, team);
    const overHttps = { headers: { 'x-forwarded-proto': 'https' }, remoteAddress: randomAddress() };
    const res = await p.api(null, overHttps).POST('/api/v1/auth/login', { body: { email: u.email, password: u.password } });
    expect(res.response.status).toBe(200);
    expect(setCookieOf(res.response)).toContain('Secure');
    // On the app without TRUST_PROXY the header is not believed.
    const team2 = await newTeam(t);
    const v = await signedInUser(t, team2);
    const plain = await t
      .api(null, { headers: { 'x-forwarded-proto': 'https' }, remoteAddress: randomAddress() })
      .POST('/api/v1/auth/login', { body: { email: v.email, password: v.password } });
    expect(plain.response.status).toBe(200);
    expect(setCookieOf(plain.response)).not.toContain('Secure');
  });

  it('answers a brute-force loop on one email with 429 and Retry-After, even for the right password then', { timeout: 60_000 }, async () => {
    const team = await newTeam(p);
    const u = await signedInUser(p, team);
    const statuses: number[] = [];
    let last = null;
    for (let i = 0; i < 8; i++) {
      last = await login(p, u.email, `guess number ${i}`); // each from another address
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const problem = expectProblem(last!, 429);
    expect(problem.code).toBe('too_many_attempts');
    const retry = Number(last!.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(900);
    expectProblem(await login(p, u.email, u.password), 429);
    // another account is not locked by it
    const v = await signedInUser(p, team);
    expect((await login(p, v.email, v.password)).statusCode).toBe(200);
  });

  it('answers many failures from one address with 429, whatever the emails', { timeout: 60_000 }, async () => {
    const address = randomAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await login(p, `x${i}-${randomUUID()}@example.com`, 'whatever it is', address)).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 401, 401, 429, 429]);
    // another address is not affected; behind the trusted proxy the client is X-Forwarded-For's
    expect((await login(p, `y-${randomUUID()}@example.com`, 'whatever it is')).statusCode).toBe(401);
    const forwarded = await p
      .api(null, { headers: { 'x-forwarded-for': address } })
      .POST('/api/v1/auth/login', { body: { email: `z-${randomUUID()}@example.com`, password: 'whatever it is' } });
    expect(forwarded.response.status).toBe(429);
  });

  it('forgives an email its failures after a successful sign-in', { timeout: 60_000 }, async () => {
    const team = await newTeam(p);
    const u = await signedInUser(p, team);
    for (let i = 0; i < 4; i++) expect((await login(p, u.email, 'wrong password')).statusCode).toBe(401);
    expect((await login(p, u.email, u.password)).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await login(p, u.email, 'wrong password')).statusCode).toBe(401);
    expect((await login(p, u.email, 'wrong password')).statusCode).toBe(429);
  });
});
