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

test('a result in an earlier version of a question switches the thread to that version and focuses it', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Search versions ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Garden', modelIds: [model.id] });
  const first = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'When do tulips flower?' });
  await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'And how deep do rhododendron roots grow?', threadId: first.threadId });
  const thread = await atrium.api<{ messages: Array<{ id: string }> }>('GET', `/api/v1/chat/${ws.id}/history/${first.threadId}`);
  const old = thread.messages[2]!.id;
  // the edit becomes the path shown; the question about rhododendrons is only a version now
  await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'And how deep do camellia roots grow?', editOf: old });

  await signIn(page);
  await page.goto(`/w/${ws.id}/t/${first.threadId}`);
  await expect(page.getByRole('article', { name: 'Your message' }).nth(1)).toContainText('camellia');
  await page.keyboard.press('Control+k');
  await page.getByRole('searchbox', { name: 'Search chats' }).pressSequentially('rhododendron');
  await page
    .getByRole('navigation', { name: 'Search results' })
    .getByRole('button', { name: /rhododendron/ })
    .click();

  // the result is the question or its answer, both only in the earlier version
  await expect(page).toHaveURL(/\?m=[0-9a-f-]+$/);
  const hitId = new URL(page.url()).searchParams.get('m')!;
  const target = page.locator(`[data-message-id="${hitId}"]`);
  await expect(target).toContainText('rhododendron');
  await expect(target).toBeFocused();
  await expect(page.locator(`[data-message-id="${old}"]`).getByRole('group', { name: 'Versions of this question' })).toContainText('1 / 2');
  await expect(page.getByRole('article', { name: 'Answer' }).last()).toContainText('Echo: And how deep do rhododendron roots grow?');
  // the server's active path moved with it: a reload shows the same version
  await page.goto(`/w/${ws.id}/t/${first.threadId}`);
  await expect(page.getByRole('article', { name: 'Your message' }).nth(1)).toContainText('rhododendron');

  // opened from another page (a link with ?m=), the same
  await atrium.api('POST', `/api/v1/chat/${ws.id}/history/${first.threadId}/active`, { messageId: thread.messages[2]!.id });
  const edited = await atrium.api<{ id: string }[]>('GET', `/api/v1/chat/${ws.id}/history/${first.threadId}/versions/${old}`);
  await page.goto(`/w/${ws.id}/t/${first.threadId}?m=${edited[1]!.id}`);
  const second = page.locator(`[data-message-id="${edited[1]!.id}"]`);
  await expect(second).toContainText('camellia');
  await expect(second).toBeFocused();
});
