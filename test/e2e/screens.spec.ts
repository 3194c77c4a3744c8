/**
 * The chat's screens and states (sign-in, workspaces, workspace form, new chat, a thread, the
 * phone's chats drawer and menu) at desktop (1280×800) and phone (375×812) width, light and dark,
 * through checks.ts: nothing wider than the window, no axe-core WCAG 2.1 A/AA violation (every
 * control named), the theme following the system. The other screens are in
 * every-screen.spec.ts. With E2E_SHOTS=<dir> each state is also saved as a PNG to look at.
 */
import path from 'node:path';
import type { Page } from '@playwright/test';
import { checkScreen } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 375, height: 812 } } as const;
const SCHEMES = ['light', 'dark'] as const;

async function check(page: Page, name: string, size: keyof typeof SIZES, scheme: (typeof SCHEMES)[number]) {
  await checkScreen(page, `${name} at ${size}`, scheme);
  if (process.env.E2E_SHOTS) await page.screenshot({ path: path.join(process.env.E2E_SHOTS, `${name}-${size}-${scheme}.png`) });
}

test('every screen fits, names its controls and follows the system theme', async ({ page, atrium }) => {
  test.setTimeout(180_000);
  const model = await createStandInModel(atrium, `Screens ${Date.now()}`);
  const second = await createStandInModel(atrium, `Second ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', {
    name: 'Screens',
    modelIds: [model.id, second.id],
    greeting: 'Hello! Ask me about the handbook.',
    samplePrompts: ['Summarise the handbook', 'What changed this year?'],
  });
  atrium.standIn.set({
    reply:
      'Here is **bold** text and code:\n\n```ts\nconst answer: number = 42;\nconsole.log(answer);\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nSee [the docs](https://example.com).',
  });
  const turn = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'Show me some TypeScript, please' });
  atrium.standIn.reset();

  for (const scheme of SCHEMES) {
    for (const size of Object.keys(SIZES) as Array<keyof typeof SIZES>) {
      await page.context().clearCookies();
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize(SIZES[size]);
      await page.goto('/');
      await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
      await check(page, 'signin', size, scheme);
      await signIn(page);
      await check(page, 'workspaces', size, scheme);
      await page.goto(`/workspaces/${ws.id}/edit`);
      await expect(page.getByLabel('Name')).toHaveValue('Screens');
      await check(page, 'workspace-form', size, scheme);
      await page.goto(`/w/${ws.id}`);
      await expect(page.getByText('Hello! Ask me about the handbook.')).toBeVisible();
      await check(page, 'new-chat', size, scheme);
      await page.goto(`/w/${ws.id}/t/${turn.threadId}`);
      await expect(page.getByRole('article', { name: 'Answer' })).toContainText('const answer');
      await expect(page.getByRole('button', { name: 'Copy code' })).toBeVisible();
      await check(page, 'thread', size, scheme);
      if (size === 'phone') {
        await page.getByRole('button', { name: 'Chats' }).click();
        await expect(page.getByRole('link', { name: 'New chat' })).toBeInViewport();
        await check(page, 'thread-sidebar', size, scheme);
        await page.getByRole('button', { name: 'Hide chats' }).click({ position: { x: 360, y: 400 } });
        await expect(page.getByRole('link', { name: 'New chat' })).not.toBeInViewport();
        await page.getByRole('button', { name: 'Menu' }).click();
        await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
        await check(page, 'menu', size, scheme);
      }
    }
  }
});
