/**
 * Setting a team up from the app: the team's embedding model chosen on the Models screen; a
 * workspace's document sets chosen in its form, which offers only chat models that answer; and a
 * member who opens an admin page directly is told up front that it is not theirs, with no form.
 * With E2E_SHOTS=<dir> the workspace form is saved at desktop and phone width, light and dark.
 */
import { everyView } from './checks.js';
import { createStandInModel } from './server.js';
import { callFromPage, expect, nav, signIn, signInAs, test } from './fixtures.js';

test("the workspace form offers the team's chat models only and attaches document sets; the embedding model is chosen on the Models screen", async ({
  page,
  atrium,
}) => {
  test.setTimeout(300_000);
  const stamp = Date.now();
  const chat = await createStandInModel(atrium, `Chatty ${stamp}`);
  const base = { apiBase: 'OPENAI', connectionType: 'URL', url: atrium.standIn.openaiBaseUrl, apiKey: 'sk-test-openai' };
  const embedder = await atrium.api<{ id: string; name: string }>('POST', '/api/v1/models', {
    ...base,
    name: `Embedder ${stamp}`,
    kind: 'embedding',
    baseModel: 'embed-e2e',
    embeddingDimensions: 5,
  });
  const painter = await atrium.api<{ id: string; name: string }>('POST', '/api/v1/models', {
    ...base,
    name: `Painter ${stamp}`,
    baseModel: 'image-e2e',
    imageGen: true,
  });
  const off = await atrium.api<{ id: string; name: string }>('POST', '/api/v1/models', {
    ...base,
    name: `Switched off ${stamp}`,
    baseModel: 'gpt-test',
    active: false,
  });
  await signIn(page);
  const setId = await page.evaluate(async (title) => {
    const form = new FormData();
    form.append('title', title);
    form.append('isPublic', 'true');
    return ((await (await fetch('/api/v1/plus', { method: 'POST', body: form })).json()) as { id: string }).id;
  }, `Travel rules ${stamp}`);

  // The embedding model, chosen by an owner on the Models screen.
  await nav(page).getByRole('link', { name: 'Models' }).click();
  const embedding = page.getByRole('form', { name: 'Embedding model' });
  // Only embedding models are offered (other tests on this server may have made some too).
  const options = embedding.getByLabel('Embedding model').getByRole('option');
  await expect(options.first()).toHaveText('None: search by words only');
  await expect(options.filter({ hasText: embedder.name })).toHaveCount(1);
  for (const other of [chat, painter, off]) await expect(options.filter({ hasText: other.name })).toHaveCount(0);
  await embedding.getByLabel('Embedding model').selectOption({ label: embedder.name });
  await embedding.getByRole('button', { name: 'Save embedding model' }).click();
  await expect(embedding.getByRole('status')).toHaveText('Saved.');
  await expect(page.getByRole('region', { name: 'Searching documents by meaning' })).toContainText(`by meaning, with ${embedder.name}`);
  expect((await atrium.api<{ embeddingModelId: string }>('GET', '/api/v1/embeddings/settings')).embeddingModelId).toBe(embedder.id);

  // A new workspace: only the active chat model is offered; the document set is attached.
  await page.goto('/workspaces/new');
  const form = page.getByRole('form', { name: 'New workspace' });
  const models = form.getByRole('group', { name: 'Models' });
  await expect(models.getByRole('checkbox', { name: chat.name })).toBeVisible();
  for (const hidden of [embedder, painter, off]) await expect(models.getByRole('checkbox', { name: hidden.name })).toHaveCount(0);
  await form.getByLabel('Name', { exact: true }).fill(`Trips ${stamp}`);
  await models.getByRole('checkbox', { name: chat.name }).check();
  await form
    .getByRole('group', { name: 'Document sets' })
    .getByRole('checkbox', { name: `Travel rules ${stamp}` })
    .check();
  await form.getByRole('button', { name: 'Create workspace' }).click();
  await expect(page).toHaveURL(/\/w\/[0-9a-f-]{36}$/);
  const wsId = page.url().split('/w/')[1]!;
  const ws = await atrium.api<{ plusIds: string[]; models: Array<{ modelId: string }> }>('GET', `/api/v1/workspaces/${wsId}`);
  expect(ws.plusIds).toEqual([setId]);
  expect(ws.models.map((m) => m.modelId)).toEqual([chat.id]);

  // Editing shows it chosen; taking it out is saved too.
  await page.goto(`/workspaces/${wsId}/edit`);
  const edit = page.getByRole('form', { name: `Edit Trips ${stamp}` });
  const set = edit.getByRole('group', { name: 'Document sets' }).getByRole('checkbox', { name: `Travel rules ${stamp}` });
  await expect(set).toBeChecked();
  await everyView(page, 'workspace-form');
  await set.uncheck();
  await edit.getByRole('button', { name: 'Save workspace' }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${wsId}$`));
  expect((await atrium.api<{ plusIds: string[] }>('GET', `/api/v1/workspaces/${wsId}`)).plusIds).toEqual([]);
});

test('a member who opens an admin page directly is told it is not theirs, and gets no form', async ({ page, atrium }) => {
  test.setTimeout(300_000);
  const stamp = Date.now();
  const model = await createStandInModel(atrium, `Owned ${stamp}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: `Owner's room ${stamp}`, modelIds: [model.id] });
  const email = `mel-${stamp}@example.test`;
  await atrium.api('POST', '/api/v1/users', { name: 'Mel Member', email, role: 'member', password: 'mel password 12345' });
  await signInAs(page, email, 'mel password 12345');

  const pages = [
    { url: '/models/new', says: "Only the team's owners and admins add and change models" },
    { url: '/models/new?system=true', says: "Only the team's owners and admins add and change models" },
    { url: `/models/${model.id}/edit`, says: "Only the team's owners and admins add and change models" },
    { url: `/workspaces/${ws.id}/edit`, says: 'Only the person who made this workspace' },
    { url: '/team', says: "Only the team's owners and admins manage its users" },
  ];
  for (const p of pages) {
    await page.goto(p.url);
    await expect(page.getByRole('alert')).toContainText(p.says);
    await expect(page.getByRole('textbox'), p.url).toHaveCount(0);
    await expect(page.getByRole('button', { name: /^(Create|Save|Invite)/ }), p.url).toHaveCount(0);
  }
  // The Models screen tells a member which embedding model is in use, without a control to change it.
  await page.goto('/models');
  await expect(page.getByRole('region', { name: 'Searching documents by meaning' })).toBeVisible();
  await expect(page.getByRole('form', { name: 'Embedding model' })).toHaveCount(0);
  // and the API refuses them anyway
  expect(await callFromPage(page, 'PUT', '/api/v1/embeddings/settings', { embeddingModelId: null })).toBe(403);
  expect(await callFromPage(page, 'PATCH', `/api/v1/workspaces/${ws.id}`, { name: 'mine now' })).toBe(403);
});
