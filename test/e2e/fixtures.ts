/**
 * `test` with a worker-scoped `atrium` fixture (one server and stand-in per worker) whose stand-in
 * switches are reset before each test, pages that record Content-Security-Policy violations, `signIn(page)` / `signInAs(page, …)` through the real
 * sign-in screen, and `callFromPage` for what a person could send from the browser's console.
 */
import { test as base, expect, type Page } from '@playwright/test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startAtrium, type AtriumServer } from './server.js';

/** In every page, before the app: record each Content-Security-Policy violation (`window.__cspViolations`). */
function watchCsp(): void {
  const w = window as unknown as { __cspViolations: string[] };
  w.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) =>
    w.__cspViolations.push(`${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`),
  );
}

/** The policy violations the page has seen since it loaded. */
export const cspViolations = (page: Page): Promise<string[]> =>
  page.evaluate(() => (window as unknown as { __cspViolations?: string[] }).__cspViolations ?? []);

export const test = base.extend<{ resetStandIn: void }, { atrium: AtriumServer }>({
  page: async ({ page }, use) => {
    await page.addInitScript(watchCsp);
    await use(page);
  },
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
  await signInAs(page, ADMIN_EMAIL, ADMIN_PASSWORD);
}

export async function signInAs(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Workspaces' })).toBeVisible();
}

/** A JSON call from the page with its session cookie (what a member could do from the console); its status. */
export function callFromPage(page: Page, method: string, url: string, body?: unknown): Promise<number> {
  return page.evaluate(
    async ([m, u, b]) => {
      const res = await fetch(u as string, {
        method: m as string,
        ...(b === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) }),
      });
      return res.status;
    },
    [method, url, body] as const,
  );
}

/** The app's main navigation. */
export const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
