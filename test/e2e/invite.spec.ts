/**
 * The first minute: a server started without ADMIN_PASSWORD prints a one-use link; following it
 * in the browser sets the admin's password and signs them in. A member invited from the Team
 * screen gets in the same way, and a link used once says so. With E2E_SHOTS=<dir> the invite
 * screen and the Team screen with its invite link are saved at desktop and phone width, light and dark.
 */
import { test as base, expect, type Page } from '@playwright/test';
import { everyView } from './checks.js';
import { ADMIN_EMAIL, startAtrium, type AtriumServer } from './server.js';
import { signInAs } from './fixtures.js';

const test = base.extend<object, { firstStart: AtriumServer }>({
  firstStart: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const server = await startAtrium({ adminPassword: false });
      await use(server);
      await server.close();
    },
    { scope: 'worker', timeout: 120_000 },
  ],
  baseURL: async ({ firstStart }, use) => use(firstStart.url),
});

const setPassword = async (page: Page, password: string) => {
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Repeat password').fill(password);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
};

test('a newcomer gets in through the link the first start printed, without ADMIN_PASSWORD', async ({ page, firstStart }) => {
  test.setTimeout(300_000);
  // The link is printed once, with the origin people reach the server at, the token in the fragment.
  const printed = /(\S+\/invite#token=[A-Za-z0-9_-]+)/.exec(firstStart.output());
  expect(printed, `no invite link in the server's output:\n${firstStart.output()}`).not.toBeNull();
  const link = printed![1]!;
  expect(link.startsWith(`${firstStart.url}/invite#token=`)).toBe(true);

  await page.goto(link);
  const form = page.getByRole('form', { name: 'Set your password' });
  await expect(form).toBeVisible();
  await expect(form.getByLabel('Email')).toHaveValue(ADMIN_EMAIL);
  await everyView(page, 'invite');

  // Two different passwords are caught before anything is sent; a short one by the browser.
  await page.getByLabel('Password', { exact: true }).fill('first password here');
  await page.getByLabel('Repeat password').fill('another password');
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await expect(form.getByRole('alert')).toContainText('not the same');

  await setPassword(page, 'the admin password 123');
  await expect(page.getByRole('heading', { name: 'Workspaces' })).toBeVisible();
  await expect(page).toHaveURL(`${firstStart.url}/`);
  // signed in as the admin, and the password works from now on
  await page.context().clearCookies();
  await signInAs(page, ADMIN_EMAIL, 'the admin password 123');
});

test('a member invited on the Team screen gets in with the link shown there; the link works once', async ({ page, browser, firstStart }) => {
  test.setTimeout(300_000);
  const stamp = Date.now();
  const ownerEmail = `owner-${stamp}@example.test`;
  await firstStart.api('POST', '/api/v1/users', { name: 'Olga Owner', email: ownerEmail, role: 'owner', password: 'owner password 123' });
  await signInAs(page, ownerEmail, 'owner password 123');
  await page.goto('/team');
  const invite = page.getByRole('region', { name: 'Invite a user' });
  await invite.getByLabel('Name').fill('Max Member');
  await invite.getByLabel('Email').fill(`max-${stamp}@example.test`);
  await invite.getByRole('button', { name: 'Invite' }).click();
  const shown = page.getByRole('status', { name: 'Invitation for Max Member' });
  await expect(shown.getByRole('button', { name: 'Copy invite link' })).toBeVisible();
  const link = (await shown.locator('code').first().textContent())!.trim();
  expect(link.startsWith(`${firstStart.url}/invite#token=`)).toBe(true);
  await everyView(page, 'team-invite-link');

  // The member opens it in their own browser.
  const theirs = await browser.newContext({ baseURL: firstStart.url });
  const member = await theirs.newPage();
  await member.goto(link);
  await expect(member.getByRole('form', { name: 'Set your password' })).toContainText('Max Member');
  await setPassword(member, 'max password 12345');
  await expect(member.getByRole('heading', { name: 'Workspaces' })).toBeVisible();
  await expect(member.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' })).toHaveCount(0);

  // Used: opening it again says so and what to do, and offers no form.
  await member.goto(link);
  await expect(member.getByRole('heading', { name: 'This invite link cannot be used' })).toBeVisible();
  await expect(member.getByRole('alert')).toContainText('already been used');
  await expect(member.getByRole('alert')).toContainText("ask your team's admin for a new invite");
  await expect(member.getByLabel('Password', { exact: true })).toHaveCount(0);
  await everyView(member, 'invite-used');
  await member.getByRole('link', { name: 'Go to sign-in' }).click();
  await expect(member.getByRole('heading', { name: 'Workspaces' })).toBeVisible();
  await theirs.close();
});
