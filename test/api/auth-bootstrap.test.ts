/**
 * The instance admin's first sign-in: ADMIN_EMAIL and ADMIN_PASSWORD on an empty
 * database, else an invite link (main.ts prints it; test/server.test.ts sees it printed). Each
 * case needs an empty database: in-memory PGlite only (the suite's PostgreSQL is shared and
 * bootstrapped by the first test file).
 */
import { describe, expect, it } from 'vitest';
import { expectStatus } from '../helpers/api.js';
import { startTestApp, testConfig } from '../helpers/app.js';
import { cookie, login, randomAddress, sessionFrom } from '../helpers/session.js';

const emptyDatabase = !process.env.ATRIUM_TEST_DATABASE_URL;

describe.runIf(emptyDatabase)('the instance admin on an empty database', () => {
  it('signs in with ADMIN_EMAIL and ADMIN_PASSWORD, and no invite is made', { timeout: 120_000 }, async () => {
    const t = await startTestApp({ auth: { ...testConfig().auth, adminEmail: 'root@example.org', adminPassword: 'first admin password' } });
    try {
      expect(t.adminInviteToken).toBeNull();
      const signIn = await t
        .api(null, { remoteAddress: randomAddress() })
        .POST('/api/v1/auth/login', { body: { email: 'root@example.org', password: 'first admin password' } });
      expect(expectStatus(signIn, 200).user).toMatchObject({ email: 'root@example.org', role: 'owner', instanceAdmin: true });
      const me = expectStatus(await t.api(null, { headers: cookie(sessionFrom(signIn.response)!) }).GET('/api/v1/me'), 200);
      expect(me.user.instanceAdmin).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('without ADMIN_PASSWORD, answers an invite with which the admin (admin@localhost) sets a password', { timeout: 120_000 }, async () => {
    const t = await startTestApp();
    try {
      expect(t.adminInviteToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect((await login(t, 'admin@localhost', 'chosen admin password')).statusCode).toBe(401);
      const res = await t.api().POST('/api/v1/auth/accept-invite', { body: { token: t.adminInviteToken!, password: 'chosen admin password' } });
      expect(expectStatus(res, 200).user).toMatchObject({ email: 'admin@localhost', instanceAdmin: true });
      expect((await login(t, 'admin@localhost', 'chosen admin password')).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
