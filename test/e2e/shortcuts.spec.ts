/**
 * Keyboard shortcuts on the chat screen and the `?` sheet that lists them: new chat, search,
 * focus the message box, stop, copy the last answer. The sheet passes the screen checks in light
 * and dark (with E2E_SHOTS=<dir> saved as PNGs).
 */
import path from 'node:path';
import { checkScreen } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

test('the chat screen is driven from the keyboard, and ? lists how', async ({ page, atrium, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const model = await createStandInModel(atrium, `Keys ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Keyboard desk', modelIds: [model.id] });
  const first = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'Name a keyboard layout' });
  await signIn(page);
  await page.goto(`/w/${ws.id}/t/${first.threadId}`);
  await expect(page.getByRole('article', { name: 'Answer' }).last()).toContainText('Echo: Name a keyboard layout');

  // ? opens the sheet (outside a text field), Esc closes it and gives the focus back
  await page.locator('body').press('?');
  const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(sheet).toBeVisible();
  for (const what of ['New chat', 'Search chats', 'Focus the message box', 'Copy the last answer'])
    await expect(sheet.getByRole('rowheader', { name: what })).toBeVisible();
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await checkScreen(page, 'shortcut sheet', scheme);
    if (process.env.E2E_SHOTS) await page.screenshot({ path: path.join(process.env.E2E_SHOTS, `chat-shortcuts-desktop-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.keyboard.press('Escape');
  await expect(sheet).toHaveCount(0);
  // the button opens it too
  await page.getByRole('button', { name: 'Keyboard shortcuts' }).click();
  await expect(sheet).toBeVisible();
  await page.keyboard.press('Escape');

  // copy the last answer
  await page.keyboard.press('Control+Shift+C');
  await expect(page.getByRole('status').filter({ hasText: 'Last answer copied' })).toHaveCount(1);
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('Echo: Name a keyboard layout');

  // focus the message box; typing ? there is text, not the sheet
  await page.keyboard.press('Shift+Escape');
  const box = page.getByRole('textbox', { name: 'Message', exact: true });
  await expect(box).toBeFocused();
  await page.keyboard.type('Why?');
  await expect(box).toHaveValue('Why?');
  await expect(sheet).toHaveCount(0);

  // stop: Esc while an answer streams keeps what arrived
  atrium.standIn.set({ reply: 'one two three four five six seven eight', chunkDelayMs: 400 });
  await page.keyboard.press('Enter');
  await expect(page.getByRole('article', { name: 'Answer' }).last()).toContainText('one');
  await page.keyboard.press('Escape');
  await expect(page.getByRole('article', { name: 'Answer' }).last()).toHaveAttribute('data-status', 'interrupted');

  // search, then a new chat
  await page.keyboard.press('Control+K');
  await expect(page.getByRole('searchbox').or(page.getByPlaceholder(/Search chats/))).toBeFocused();
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+Shift+O');
  await expect(page.getByRole('heading', { name: 'New chat' })).toBeVisible();
  expect(new URL(page.url()).pathname).toBe(`/w/${ws.id}`);
});
