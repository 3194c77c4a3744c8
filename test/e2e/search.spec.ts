/**
 * Search chats in a real browser: threads seeded through the API, the search box (and Ctrl+K),
 * results with the matched words marked, and a result that opens its thread at an early message —
 * one the conversation would not render at first (it shows the last 15). Desktop and phone, light
 * and dark, through checks.ts; E2E_SHOTS=<dir> saves each state.
 */
import path from 'node:path';
import type { Page } from '@playwright/test';
import { checkScreen } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const SCHEMES = ['light', 'dark'] as const;

async function shot(page: Page, name: string) {
  if (process.env.E2E_SHOTS) await page.screenshot({ path: path.join(process.env.E2E_SHOTS, `${name}.png`) });
}

test('search finds an early message of a long thread and opens the thread at it', async ({ page, atrium }) => {
  test.setTimeout(600_000);
  const model = await createStandInModel(atrium, `Search ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Kitchen', modelIds: [model.id] });
  const first = await atrium.api<{ threadId: string; messageId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, {
    prompt: 'How do I make bitter orange marmalade at home?',
  });
  for (let i = 0; i < 24; i++) {
    await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, {
      prompt: `Next step number ${i}: what about the jars and the sugar?`,
      threadId: first.threadId,
    });
  }
  await atrium.api('POST', `/api/v1/chat/${ws.id}/history/${first.threadId}`, { title: 'Kitchen notes' });
  await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'A recipe for lemon curd, please' });
  await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'Which bread goes with soup?' });

  for (const scheme of SCHEMES) {
    for (const size of Object.keys(SIZES) as Array<keyof typeof SIZES>) {
      const name = `search-${size}-${scheme}`;
      await page.context().clearCookies();
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize(SIZES[size]);
      await signIn(page);
      await page.goto(`/w/${ws.id}`);
      await expect(page.getByRole('heading', { name: 'New chat' })).toBeVisible();

      // Ctrl+K goes to the search box (opening the drawer on a phone)
      await page.keyboard.press('Control+k');
      const box = page.getByRole('searchbox', { name: 'Search chats' });
      await expect(box).toBeFocused();
      await box.pressSequentially('marmal');
      const results = page.getByRole('navigation', { name: 'Search results' });
      const hit = results.getByRole('button', { name: /Kitchen notes/ });
      await expect(hit).toBeVisible();
      await expect(results.getByRole('button')).toHaveCount(1);
      await expect(hit.locator('mark')).toHaveText(['marmalade']);
      await checkScreen(page, `${name} results`, scheme);
      await shot(page, `${name}-results`);

      await hit.click();
      await expect(page).toHaveURL(new RegExp(`/w/${ws.id}/t/${first.threadId}\\?m=[0-9a-f-]+$`));
      const messageId = new URL(page.url()).searchParams.get('m')!;
      const target = page.locator(`[data-message-id="${messageId}"]`);
      await expect(target).toContainText('bitter orange marmalade');
      await expect(target).toBeInViewport();
      await expect(target).toBeFocused();
      await expect(page.getByRole('heading', { name: 'Kitchen notes' })).toBeVisible();
      await checkScreen(page, `${name} opened`, scheme);
      await shot(page, `${name}-opened`);

      // Esc in the box clears it and the thread list is back
      if (size === 'phone') await page.getByRole('button', { name: 'Chats' }).click();
      await box.focus();
      await box.press('Escape');
      await expect(box).toHaveValue('');
      await expect(page.getByRole('navigation', { name: 'Chats' }).getByRole('link', { name: 'Kitchen notes' })).toBeVisible();
    }
  }
});
