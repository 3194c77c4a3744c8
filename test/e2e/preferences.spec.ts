/**
 * Personal preferences (Account → Preferences, kept in this browser): the theme overrides the
 * system's, Enter can be set to add a line (Ctrl+Enter then sends), the app opens in a chosen
 * workspace and chats start with a chosen model. The card passes the screen checks in both themes.
 */
import { checkScreen } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

const background = (page: import('@playwright/test').Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);

test('the theme, Enter, the opening workspace and the starting model follow the preferences', async ({ page, atrium }) => {
  const first = await createStandInModel(atrium, `Alpha ${Date.now()}`);
  const second = await createStandInModel(atrium, `Beta ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: `Prefs desk ${Date.now()}`, modelIds: [first.id, second.id] });
  await page.emulateMedia({ colorScheme: 'light' });
  await signIn(page);
  await page.goto('/account');
  const prefs = page.getByRole('region', { name: 'Preferences' });
  await expect(prefs).toBeVisible();
  await checkScreen(page, 'preferences', 'light');

  // Dark chosen while the system is light: the page is dark, and stays so after a reload.
  const light = await background(page);
  await prefs.getByRole('radio', { name: 'Dark' }).check();
  await expect.poll(() => background(page)).not.toBe(light);
  await page.reload();
  await expect(page.getByRole('radio', { name: 'Dark' })).toBeChecked();
  const dark = await background(page);
  expect(dark).not.toBe(light);
  await checkScreen(page, 'preferences, dark chosen', 'dark');
  await page.getByRole('radio', { name: 'Same as this device' }).check();
  await expect.poll(() => background(page)).toBe(light);

  await page.getByRole('checkbox', { name: /Enter sends the message/ }).uncheck();
  await page
    .getByRole('combobox', { name: 'Open Atrium in' })
    .selectOption({ label: (await atrium.api<{ name: string }>('GET', `/api/v1/workspaces/${ws.id}`)).name });
  await page.getByRole('combobox', { name: 'Start chats with' }).selectOption({ label: second.name });

  // Opened at its start page, the app goes to that workspace, with that model picked.
  await page.goto('/');
  await expect(page).toHaveURL(new RegExp(`/w/${ws.id}$`));
  await expect(page.getByRole('combobox', { name: 'Model' })).toHaveValue(second.id);

  // Enter adds a line; Ctrl+Enter sends.
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('first line');
  await box.press('Enter');
  await box.pressSequentially('second line');
  await expect(box).toHaveValue('first line\nsecond line');
  await box.press('Control+Enter');
  await expect(page.getByRole('article', { name: 'Answer' }).last()).toContainText('second line');
  await expect(box).toHaveValue('');
});
