/**
 * Sign-in under attack: spellings of one email share its throttle, every failed sign-in costs the
 * same work, a client cannot pick its own address behind a proxy, the cookie is `__Host-` over
 * HTTPS and a planted second cookie is not believed, a cookie that is no session is a 401 before
 * the CSRF check, and a revoked key or a deleted user fails on every node at once.
 */
import crypto, { randomUUID } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { emailKey } from '../../src/security/email.js';
import { SIGN_IN_ACCOUNTS_PER_EMAIL } from '../../src/modules/teams/auth-service.js';
import { apiClient, expectStatus } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, testConfig, type TestApp } from '../helpers/app.js';
import { cookie, login, randomAddress, SAME_ORIGIN, setCookieOf, signedInUser } from '../helpers/session.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ auth: { ...testConfig().auth, trustProxy: 1, maxFailuresPerEmail: 5, maxFailuresPerAddress: 8 } });
});
afterAll(() => t.close());

const PASSWORD = 'correct horse battery';

/** A user of `team` with this exact email and the test password. */
async function userWithEmail(team: { ownerKey: string }, email: string): Promise<void> {
  const { error, response } = await t.api(team.ownerKey).POST('/api/v1/users', { body: { name: 'Person', email, role: 'member', password: PASSWORD } });
  expect(response.status, JSON.stringify(error)).toBe(201);
}

describe('one rule for emails', () => {
  it('folds case and compatibility forms, and keeps a dotted capital I apart from i', () => {
    expect(emailKey('  Ann@Example.COM ')).toBe('ann@example.com');
    expect(emailKey('ｂob@example.com')).toBe('bob@example.com'); // full-width b
    expect(emailKey('STRASSE@x.io')).toBe(emailKey('straße@x.io'));
    expect(emailKey('victim.İ@x.io')).not.toBe(emailKey('victim.i@x.io'));
  });

  it('does not let another spelling of a locked email sign in, nor count its failures elsewhere', { timeout: 60_000 }, async () => {
    const team = await newTeam(t);
    const email = `victim.i-${randomUUID()}@example.com`;
    await userWithEmail(team, email);
    for (let i = 0; i < 5; i++) expect((await login(t, email, `guess ${i}`)).statusCode).toBe(401);
    expect((await login(t, email, PASSWORD)).statusCode).toBe(429);
    // U+0130: PostgreSQL's lower() makes it `i`, so it once reached the account under a key of its own
    const dotted = email.replace('victim.i', 'victim.\u0130');
    expect((await login(t, dotted, PASSWORD)).statusCode).not.toBe(200);
    // spellings of the same key share the lock
    expect((await login(t, email.toUpperCase(), PASSWORD)).statusCode).toBe(429);
    expect((await login(t, `  ${email.replace('v', '\uff56')}  `, PASSWORD)).statusCode).toBe(429);
  });

  it('refuses a second user in a team whose email differs only in case or compatibility form', async () => {
    const team = await newTeam(t);
    const email = `dup-${randomUUID()}@example.com`;
    await userWithEmail(team, email);
    const again = await t.api(team.ownerKey).POST('/api/v1/users', { body: { name: 'Twin', email: email.replace('d', '\uff44'), role: 'member' } });
    expectProblem(again, 409);
  });
});

describe('failed sign-ins cost the same', () => {
  /** How many scrypt derivations `fn` runs (node:crypto's scrypt counted through its ES module binding). */
  async function scryptsDuring(fn: () => Promise<unknown>): Promise<number> {
    const original = crypto.scrypt;
    let n = 0;
    (crypto as { scrypt: unknown }).scrypt = (...args: unknown[]) => {
      n++;
      return (original as (...a: unknown[]) => void)(...args);
    };
    syncBuiltinESMExports();
    try {
      await fn();
    } finally {
      (crypto as { scrypt: unknown }).scrypt = original;
      syncBuiltinESMExports();
    }
    return n;
  }

  it('whether the email is unknown, in one team or in several, and whether the password is right', { timeout: 60_000 }, async () => {
    const email = `many-${randomUUID()}@example.com`;
    await userWithEmail(await newTeam(t), email);
    const single = `one-${randomUUID()}@example.com`;
    await userWithEmail(await newTeam(t), single);
    await userWithEmail(await newTeam(t), email);
    const work = {
      unknown: await scryptsDuring(() => login(t, `nobody-${randomUUID()}@example.com`, 'wrong password')),
      oneTeam: await scryptsDuring(() => login(t, single, 'wrong password')),
      twoTeams: await scryptsDuring(() => login(t, email, 'wrong password')),
      right: await scryptsDuring(async () => expect((await login(t, email, PASSWORD)).statusCode).toBe(200)),
    };
    expect(work).toEqual({
      unknown: SIGN_IN_ACCOUNTS_PER_EMAIL,
      oneTeam: SIGN_IN_ACCOUNTS_PER_EMAIL,
      twoTeams: SIGN_IN_ACCOUNTS_PER_EMAIL,
      right: SIGN_IN_ACCOUNTS_PER_EMAIL,
    });
  });
});

describe('behind a proxy', () => {
  it("counts a client's failures under the address the proxy saw, whatever X-Forwarded-For the client wrote", { timeout: 60_000 }, async () => {
    const client = randomAddress();
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      // the client's own header first, then what the (trusted, one-hop) proxy appended
      const { response } = await t
        .api(null, { headers: { 'x-forwarded-for': `${randomAddress()}, ${client}` } })
        .POST('/api/v1/auth/login', { body: { email: `x${i}-${randomUUID()}@example.com`, password: 'whatever it is' } });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 401, 401, 429, 429]);
  });
});

describe('the session cookie', () => {
  const https = { 'x-forwarded-proto': 'https' };

  it('is __Host-atrium_session over HTTPS, and a plain atrium_session is then not believed', async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    const { response: res } = await t.api(null, { headers: https, remoteAddress: randomAddress() }).POST('/api/v1/auth/login', {
      body: { email: u.email, password: u.password },
    });
    expect(res.status).toBe(200);
    const set = setCookieOf(res);
    expect(set).toMatch(/^__Host-atrium_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
    const token = /^__Host-atrium_session=([^;]+)/.exec(set)![1]!;
    expect((await t.api(null, { headers: { ...https, cookie: `__Host-atrium_session=${token}` } }).GET('/api/v1/me')).response.status).toBe(200);
    expectProblem(await t.api(null, { headers: { ...https, cookie: `atrium_session=${token}` } }).GET('/api/v1/me'), 401);
    // logging out over HTTPS removes the prefixed cookie
    const { response: out } = await t
      .api(null, { headers: { ...https, ...SAME_ORIGIN, cookie: `__Host-atrium_session=${token}` } })
      .POST('/api/v1/auth/logout');
    expect(out.status).toBe(204);
    expect(setCookieOf(out)).toMatch(/^__Host-atrium_session=; .*Max-Age=0; Secure$/);
  });

  it('is not believed when two different ones are sent (one of them planted)', async () => {
    const team = await newTeam(t);
    const victim = await signedInUser(t, team);
    const attacker = await signedInUser(t, team);
    for (const order of [
      `atrium_session=${attacker.session}; atrium_session=${victim.session}`,
      `atrium_session=${victim.session}; atrium_session=${attacker.session}`,
    ]) {
      expect(expectProblem(await t.api(null, { headers: { cookie: order } }).GET('/api/v1/me'), 401).code).toBe('session_ended');
    }
    // the same cookie twice is still one session
    const twice = { cookie: `atrium_session=${victim.session}; atrium_session=${victim.session}` };
    expect((await t.api(null, { headers: twice }).GET('/api/v1/me')).response.status).toBe(200);
  });

  it('that is no session answers 401 before any CSRF check; a live one without Origin still gets 403 csrf', async () => {
    const team = await newTeam(t);
    const u = await signedInUser(t, team);
    for (const value of ['garbage', 'A'.repeat(43)]) {
      const res = await t.api(null, { headers: { cookie: `atrium_session=${value}` } }).POST('/api/v1/api-keys', { body: { name: 'k' } });
      expect(expectProblem(res, 401).code).toBe('session_ended');
    }
    const live = await t.api(null, { headers: cookie(u.session) }).POST('/api/v1/api-keys', { body: { name: 'k' } });
    expect(expectProblem(live, 403).code).toBe('csrf');
  });
});

// Several nodes share only a PostgreSQL server (the embedded database is opened by one process).
describe.runIf(process.env.ATRIUM_TEST_DATABASE_URL)('on another node', () => {
  it('a revoked API key fails at once, and a removed user\u2019s key too', async () => {
    const other = await buildApp(testConfig(), { logger: false });
    try {
      const team = await newTeam(t);
      const u = await signedInUser(t, team);
      const onOther = async (key: string) => (await apiClient(other.app, key).GET('/api/v1/me')).response.status;
      const { id, key } = expectStatus(await t.api(u.key).POST('/api/v1/api-keys', { body: { name: 'short-lived' } }), 201);
      if (!key) throw new Error('a new API key is shown once, on creation');
      expect(await onOther(key)).toBe(200); // now in the other node's hands
      expect((await t.api(u.key).DELETE('/api/v1/api-keys/{id}', { params: { path: { id } } })).response.status).toBe(204);
      expect(await onOther(key)).toBe(401);
      expect(await onOther(u.key)).toBe(200);
      expect((await t.api(team.ownerKey).DELETE('/api/v1/users/{userId}', { params: { path: { userId: u.id } } })).response.status).toBe(204);
      expect(await onOther(u.key)).toBe(401);
    } finally {
      await other.app.close();
    }
  });
});
