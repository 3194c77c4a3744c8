/**
 * Images in the chat: attach an image for a model with vision, see the answer, reload and find the
 * thumbnail (opening the stored image); a model without vision says why no image can be attached;
 * an image model's answer shows its image with a download.
 */
import { fileURLToPath } from 'node:url';
import { checkScreen } from './checks.js';
import { createStandInModel, type AtriumServer } from './server.js';
import { cspViolations, expect, signIn, test } from './fixtures.js';

/** A stand-in model with the given image abilities. */
function model(atrium: AtriumServer, name: string, abilities: { hasVision?: boolean; imageGen?: boolean }) {
  return atrium.api<{ id: string; name: string }>('POST', '/api/v1/models', {
    name: `${name} ${Date.now()}`,
    apiBase: 'OPENAI',
    connectionType: 'URL',
    url: atrium.standIn.openaiBaseUrl,
    baseModel: 'gpt-test',
    apiKey: 'sk-test-openai',
    contextWindow: 8192,
    ...abilities,
  });
}

const PNG = fileURLToPath(new URL('../fixtures/images/python.png', import.meta.url));

test('attach an image → the answer → reload: the thumbnail stays and opens the stored image', async ({ page, atrium }) => {
  const seeing = await model(atrium, 'Seeing', { hasVision: true });
  const blind = await createStandInModel(atrium, `Blind ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Picture desk', modelIds: [seeing.id, blind.id] });
  await signIn(page);
  await page.goto(`/w/${ws.id}`);

  await page.getByLabel('Images to attach').setInputFiles(PNG);
  const pending = page.getByRole('list', { name: 'Images to send' });
  await expect(pending.getByRole('img')).toHaveCount(1);
  await page.getByLabel('Message').fill('What is on this picture?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.getByRole('article', { name: 'Answer' }).last()).toContainText('Echo: What is on this picture? (saw 1 image)');
  await expect(pending).toHaveCount(0);

  await page.reload();
  const attached = page.getByRole('article', { name: 'Your message' }).getByRole('list', { name: 'Attached images' });
  const thumb = attached.getByRole('img');
  await expect(thumb).toHaveAttribute('alt', 'Image 1 (16 × 16)');
  await expect.poll(() => thumb.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth)).toBe(16);
  const href = await attached.getByRole('link', { name: /Image 1/ }).getAttribute('href');
  expect(href).toMatch(/^\/api\/v1\/chat\/images\/[0-9a-f-]{36}$/);
  const full = await page.request.get(href!);
  expect(full.headers()['content-type']).toBe('image/png');
  await checkScreen(page, 'chat with an attached image', 'light');

  // A model without vision: the image button says why instead of attaching.
  await page.getByLabel('Model').selectOption({ label: blind.name });
  await page.getByRole('button', { name: 'Attach images' }).click();
  await expect(page.getByRole('alert')).toContainText('does not take images');
  expect(await cspViolations(page)).toEqual([]);
});

test('an image model answers with an image, shown with a download', async ({ page, atrium }) => {
  const painter = await model(atrium, 'Painter', { imageGen: true });
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Studio', modelIds: [painter.id] });
  await signIn(page);
  await page.goto(`/w/${ws.id}`);
  await page.getByLabel('Message').fill('Paint a small blue rectangle');
  await page.getByRole('button', { name: 'Send' }).click();
  const made = page.getByRole('article', { name: 'Answer' }).last().getByRole('list', { name: 'Generated images' });
  await expect(made.getByRole('img')).toHaveAttribute('alt', 'Generated image 1 (4 × 3)');
  await expect(made.getByRole('link', { name: 'Download' })).toHaveAttribute('download', 'image-1.png');
  await page.reload();
  await expect(page.getByRole('list', { name: 'Generated images' }).getByRole('img')).toHaveCount(1);
  expect(await cspViolations(page)).toEqual([]);
});
