/**
 * `test` with a worker-scoped `atrium` fixture (one server and stand-in per worker) whose stand-in
 * switches are reset before each test, and `signIn(page)` through the real sign-in screen.
 */
import { test as base, expect, type Page } from '@playwright/test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startAtrium, type AtriumServer } from './server.js';

export const test = base.extend<{ resetStandIn: void }, { atrium: AtriumServer }>({
  atrium: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const server = await startAtrium();
      await use(server);
      await server.close();
    },
    { scope: 'worker', timeout: 120_000 },
  ],
  baseURL: async ({ atrium }, use) => use(atrium.url),
  resetStandIn: [
    async ({ atrium }, use) => {
      atrium.standIn.reset();
      await use();
    },
    { auto: true },
  ],
});

export { expect };

export async function signIn(page: Page): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Email').fill(ADMIN_EMAIL);
  await page.getByLabel('Password').fill(ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Workspaces' })).toBeVisible();
}
