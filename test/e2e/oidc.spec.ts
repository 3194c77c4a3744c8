/**
 * Signing in through the organisation's identity provider in Chromium, the whole redirect: the
 * sign-in page's "Sign in with …" button, the provider's login form (a real OpenID provider on
 * loopback, test/support/oidc-provider.ts), and back in the app, in the team the person's group
 * maps to. A person whose groups map to no team is back on the sign-in page, told why, with no
 * session. PASSWORD_LOGIN=off: the password form is gone.
 */
import { test as base, expect, type Page } from '@playwright/test';
import { startTestIdp, type TestIdp } from '../support/oidc-provider.js';
import { checkScreen } from './checks.js';
import { freePort, startAtrium, type AtriumServer } from './server.js';

const test = base.extend<object, { sso: { atrium: AtriumServer; idp: TestIdp } }>({
  sso: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const port = await freePort();
      const idp = await startTestIdp({ redirectUris: [`http://127.0.0.1:${port}/api/v1/auth/oidc/callback`] });
      idp.accounts.set('alice', { email: 'alice@example.test', name: 'Alice Example', groups: ['research-team'] });
      idp.accounts.set('mallory', { email: 'mallory@example.test', name: 'Mallory', groups: ['contractors'] });
      const atrium = await startAtrium({
        port,
        env: {
          OIDC_ISSUER: idp.issuer,
          OIDC_CLIENT_ID: idp.clientId,
          OIDC_CLIENT_SECRET: idp.clientSecret,
          OIDC_NAME: 'Acme ID',
          OIDC_TEAM_MAP: JSON.stringify({ 'research-team': { team: 'Research', role: 'admin' } }),
          PASSWORD_LOGIN: 'off',
        },
      });
      await use({ atrium, idp });
      await atrium.close();
      await idp.close();
    },
    { scope: 'worker', timeout: 120_000 },
  ],
  baseURL: async ({ sso }, use) => use(sso.atrium.url),
});

async function throughProvider(page: Page, username: string): Promise<void> {
  await page.goto('/');
  await expect(page.getByLabel('Password')).toHaveCount(0);
  await page.getByRole('button', { name: 'Sign in with Acme ID' }).click();
  await expect(page.getByRole('heading', { name: 'Test identity provider' })).toBeVisible();
  await page.getByLabel('Username').fill(username);
  await page.getByRole('button', { name: 'Continue' }).click();
}

test('a person signs in through the identity provider and lands in the team their group maps to', async ({ page, sso }) => {
  await throughProvider(page, 'alice');
  await expect(page.getByRole('heading', { name: 'Workspaces' })).toBeVisible();
  await expect(page).toHaveURL(`${sso.atrium.url}/`);
  await expect(page.getByText('Alice Example · Research')).toBeVisible();
  const me = await page.evaluate(() => fetch('/api/v1/me').then((r) => r.json() as Promise<{ user: { role: string }; team: { name: string } }>));
  expect(me.user.role).toBe('admin');
  expect(me.team.name).toBe('Research');
  // An admin of the team: the Team screen is theirs.
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' })).toBeVisible();
  // Password sign-in is off: their account has API keys, and no password to change.
  const methods = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/methods'));
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
  await expect(page.getByRole('heading', { name: 'My API keys' })).toBeVisible();
  expect(await (await methods).json()).toMatchObject({ password: false });
  await expect(page.getByRole('heading', { name: 'My password' })).toHaveCount(0);
});

test('a person whose groups map to no team is told so on the sign-in page, with no session', async ({ page }) => {
  await throughProvider(page, 'mallory');
  await expect(page.getByRole('alert')).toContainText('Your Acme ID account is in no group that has access to Atrium');
  await expect(page.getByRole('button', { name: 'Sign in with Acme ID' })).toBeVisible();
  expect(new URL(page.url()).search).toBe('');
  await checkScreen(page, 'sign-in with the identity provider, refused', 'light');
  const status = await page.evaluate(() => fetch('/api/v1/me').then((r) => r.status));
  expect(status).toBe(401);
});
