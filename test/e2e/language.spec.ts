/**
 * The app's language: English by default; German when chosen under Account → Preferences (kept
 * after a reload, <html lang> following), and German from the start for a browser set to de-DE.
 * The German screens pass the screen checks at desktop and phone width in light and dark (their
 * longer words must fit too); with E2E_SHOTS=<dir> each is saved as a PNG.
 */
import { everyView } from './checks.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

// checks.ts adds a style tag to take whole-page shots, which the Content-Security-Policy refuses
test.use({ bypassCSP: !!process.env.E2E_SHOTS });

test('German chosen in the preferences: the app speaks German, also after a reload, and English again when switched back', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Sprache ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Küche', modelIds: [model.id] });
  await signIn(page);
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await page.goto('/account');
  await page.getByRole('combobox', { name: 'Language' }).selectOption('de');

  await expect(page.getByRole('heading', { name: 'Mein Konto' })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Hauptnavigation' }).getByRole('link', { name: 'Dokumente' })).toBeVisible();
  await expect(page.locator('html')).toHaveAttribute('lang', 'de');
  await expect(page.getByRole('combobox', { name: 'Sprache' })).toHaveValue('de');
  await everyView(page, 'de-account');

  await page.reload();
  await expect(page.getByRole('heading', { name: 'Mein Konto' })).toBeVisible();

  // the chat screen, with a question answered and the ? sheet
  await page.goto(`/w/${ws.id}`);
  await expect(page.getByRole('heading', { name: 'Neuer Chat' })).toBeVisible();
  await everyView(page, 'de-chat-new');
  await page.getByRole('textbox', { name: 'Nachricht', exact: true }).fill('Wie backt man Brot?');
  await page.getByRole('button', { name: 'Senden' }).click();
  await expect(page.getByRole('article', { name: 'Antwort' }).last()).toContainText('Echo: Wie backt man Brot?');
  await expect(page.getByRole('button', { name: 'Neu erzeugen' })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Chats' }).getByRole('heading', { name: 'Heute' })).toBeVisible();
  await everyView(page, 'de-chat-thread');
  await page.getByRole('button', { name: 'Tastenkürzel' }).click();
  const sheet = page.getByRole('dialog', { name: 'Tastenkürzel' });
  await expect(sheet.getByRole('rowheader', { name: 'Letzte Antwort kopieren' })).toBeVisible();
  await everyView(page, 'de-shortcuts');
  await sheet.getByRole('button', { name: 'Schließen' }).click();

  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Arbeitsbereiche' })).toBeVisible();
  await everyView(page, 'de-workspaces');
  await page.goto(`/workspaces/${ws.id}/edit`);
  await expect(page.getByRole('heading', { name: 'Küche bearbeiten' })).toBeVisible();
  await everyView(page, 'de-workspace-form');

  // back to English
  await page.goto('/account');
  await page.getByRole('combobox', { name: 'Sprache' }).selectOption('en');
  await expect(page.getByRole('heading', { name: 'My account' })).toBeVisible();
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
});

test.describe('a browser set to German', () => {
  test.use({ locale: 'de-DE' });

  test('opens in German, from the sign-in on', async ({ page }) => {
    await page.goto('/');
    await expect(page.getByRole('heading', { name: 'Bei Atrium anmelden' })).toBeVisible();
    await expect(page.locator('html')).toHaveAttribute('lang', 'de');
    await everyView(page, 'de-signin');
    await page.getByLabel('E-Mail-Adresse').fill(ADMIN_EMAIL);
    await page.getByLabel('Passwort').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await expect(page.getByRole('heading', { name: 'Arbeitsbereiche' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Abmelden' })).toBeVisible();
    // the preference says the browser's language, named in its own words
    await page.goto('/account');
    await expect(page.getByRole('combobox', { name: 'Sprache' })).toHaveValue('system');
    await expect(page.getByRole('option', { name: 'Sprache des Browsers (Deutsch)' })).toBeAttached();
  });
});
