/**
 * Exporting a thread: the "Export" control of an open thread offers Markdown and JSON and downloads
 * the conversation. The thread header with the control, closed and open, passes the screen checks
 * at desktop and phone width in light and dark; with E2E_SHOTS=<dir> each is saved as a PNG.
 */
import { readFile } from 'node:fs/promises';
import { everyView } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

test('the Export control downloads the thread as Markdown and as JSON', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Exporter ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Export desk', modelIds: [model.id] });
  const first = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'Where do zeppelins dock in winter?' });
  await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'And in *summer*?', threadId: first.threadId });
  await signIn(page);
  await page.goto(`/w/${ws.id}/t/${first.threadId}`);
  await expect(page.getByRole('article', { name: 'Answer' }).last()).toContainText('Echo: And in summer?');

  const exportButton = page.getByRole('button', { name: 'Export', exact: true });
  await expect(exportButton).toHaveAttribute('aria-expanded', 'false');
  await everyView(page, 'chat-export');

  await exportButton.click();
  const markdown = page.getByRole('link', { name: /Markdown/ });
  await expect(markdown).toBeVisible();
  await expect(page.getByRole('link', { name: /JSON/ })).toBeVisible();
  await everyView(page, 'chat-export-open');

  const [md] = await Promise.all([page.waitForEvent('download'), markdown.click()]);
  expect(md.suggestedFilename()).toBe('Where do zeppelins dock in winter.md');
  const text = await readFile((await md.path())!, 'utf8');
  expect(text).toMatch(/^# Where do zeppelins dock in winter\?\n/);
  for (const line of ['Where do zeppelins dock in winter?', 'Echo: Where do zeppelins dock in winter?', 'And in *summer*?', 'Echo: And in *summer*?'])
    expect(text).toContain(`\n${line}\n`);
  expect(text).toContain(`## Assistant · ${model.name}`);
  // picking a format closes the menu
  await expect(markdown).toHaveCount(0);

  await exportButton.click();
  const [json] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /JSON/ }).click()]);
  expect(json.suggestedFilename()).toBe('Where do zeppelins dock in winter.json');
  const body = JSON.parse(await readFile((await json.path())!, 'utf8')) as { id: string; messages: Array<{ content: string }> };
  expect(body.id).toBe(first.threadId);
  expect(body.messages.map((m) => m.content)).toEqual([
    'Where do zeppelins dock in winter?',
    'Echo: Where do zeppelins dock in winter?',
    'And in *summer*?',
    'Echo: And in *summer*?',
  ]);

  // Escape closes the menu and gives the focus back to the button
  await exportButton.click();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('link', { name: /Markdown/ })).toHaveCount(0);
  await expect(exportButton).toBeFocused();
  // a new chat has nothing to export
  await page.goto(`/w/${ws.id}`);
  await expect(page.getByRole('heading', { name: 'New chat' })).toBeVisible();
  await expect(exportButton).toHaveCount(0);
});
