/**
 * The prompt library: a prompt saved on the Account screen (with a `{{variable}}`) and the
 * workspace's sample prompts appear in the composer's `/` menu; picking one asks for its variables
 * and puts the text in the message box. The Account section and the open menu pass the screen
 * checks at desktop and phone width, light and dark (E2E_SHOTS=<dir> saves them).
 */
import { everyView } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

test('/ inserts a saved prompt, its variables filled in, and offers the workspace\u2019s sample prompts', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Library ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', {
    name: 'Library desk',
    modelIds: [model.id],
    samplePrompts: ['What is new this week?'],
  });
  await signIn(page);
  await page.goto('/account');
  const section = page.getByRole('region', { name: 'Saved prompts' });
  await section.getByLabel('Title').fill(`Translate ${Date.now()}`);
  const title = await section.getByLabel('Title').inputValue();
  await section.getByLabel('Prompt', { exact: true }).fill('Translate {{text}} into {{language}}.');
  await section.getByRole('button', { name: 'Save prompt' }).click();
  await expect(section.getByRole('list', { name: 'Saved prompts' })).toContainText(title);
  await everyView(page, 'account-prompts');

  await page.goto(`/w/${ws.id}`);
  const box = page.getByRole('textbox', { name: 'Message', exact: true });
  await box.fill('/');
  const menu = page.getByRole('listbox', { name: 'Prompts' });
  await expect(menu.getByRole('option', { name: /What is new this week\?/ })).toBeVisible();
  await box.press('End');
  await box.pressSequentially('transl');
  await expect(menu.getByRole('option')).toHaveCount(1);
  await everyView(page, 'chat-prompt-menu');
  await box.press('Enter');
  const form = page.getByRole('form', { name: `Fill in ${title}` });
  await form.getByLabel('text').fill('good morning');
  await form.getByLabel('language').fill('French');
  await form.getByRole('button', { name: 'Insert' }).click();
  await expect(box).toHaveValue('Translate good morning into French.');
  await expect(box).toBeFocused();
  await box.press('Enter');
  await expect(page.getByRole('article', { name: 'Answer' }).last()).toContainText('Echo: Translate good morning into French.');

  // a sample prompt goes in as it is; Esc closes the menu and leaves the text
  await box.fill('/what');
  await box.press('Escape');
  await expect(menu).toHaveCount(0);
  await expect(box).toHaveValue('/what');
  await box.fill('/what is');
  await menu.getByRole('option', { name: /What is new this week\?/ }).click();
  await expect(box).toHaveValue('What is new this week?');
});
