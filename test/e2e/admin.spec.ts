/**
 * The admin screens in a real browser: the documents library, models with their connection test, prompt
 * logs, team and account screens, each with its main path and its main failure, and a member who
 * neither sees the admin controls nor gets past the API when calling it anyway.
 */
import { createStandInModel } from './server.js';
import { callFromPage, expect, nav, signIn, signInAs, test } from './fixtures.js';

test('documents: create a set, upload with a rejected file, read chunks, test a question, delete', async ({ page }) => {
  await signIn(page);
  await nav(page).getByRole('link', { name: 'Documents' }).click();
  await page.getByRole('link', { name: 'New document set' }).click();
  await page.getByLabel('Title').fill('Handbook');
  await page.getByLabel('Description').fill('Company policies');
  await page.getByLabel('Public: every member of the team can read it').check();
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { name: 'Handbook' })).toBeVisible();

  const text = '# Leave\n\nEmployees get twenty-eight days of paid leave each year. Requests go to the team lead.\n';
  await page.getByLabel('Files to upload').setInputFiles([
    { name: 'leave.md', mimeType: 'text/markdown', buffer: Buffer.from(text) },
    { name: 'tool.exe', mimeType: 'application/octet-stream', buffer: Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x01]) },
  ]);
  const uploads = page.getByRole('list', { name: 'Uploads' });
  await expect(uploads.getByRole('listitem', { name: 'Upload of leave.md' })).toContainText('Added');
  const rejected = uploads.getByRole('listitem', { name: 'Upload of tool.exe' });
  await expect(rejected.getByRole('alert')).toContainText('Unsupported type');
  await expect(rejected.getByRole('alert')).toContainText('tool.exe');

  const files = page.getByRole('list', { name: 'Files' });
  await expect(files.getByRole('listitem')).toHaveCount(1);
  await expect(files).toContainText('leave.md');
  await expect(files).toContainText(/\d+ tokens/);
  await page.getByRole('button', { name: 'Show chunks of leave.md' }).click();
  await expect(page.getByRole('list', { name: 'Chunks of leave.md' })).toContainText('twenty-eight days of paid leave');
  await expect(page.getByRole('link', { name: 'Download leave.md' })).toHaveAttribute('href', /\/api\/v1\/plus\/file\/[0-9a-f-]+\/content$/);
  const href = await page.getByRole('link', { name: 'Download leave.md' }).getAttribute('href');
  const original = await page.evaluate(async (u) => (await fetch(u!)).text(), href);
  expect(original).toBe(text);

  await page.getByRole('textbox', { name: 'Question' }).fill('How many days of paid leave?');
  await page.getByRole('button', { name: 'Show context' }).click();
  await expect(page.getByLabel('Context for the question')).toContainText('twenty-eight days');

  await page.getByRole('button', { name: 'Delete leave.md' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(page.getByText('No file yet.')).toBeVisible();
  await page.getByRole('button', { name: 'Delete document set Handbook' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(page.getByRole('heading', { name: 'Documents' })).toBeVisible();
  await expect(page.getByRole('link', { name: /^Handbook/ })).toHaveCount(0);
});

test('models: create with a write-only key, test the connection, see a failing one', async ({ page, atrium }) => {
  const secret = 'sk-e2e-secret-key-abcdef123456';
  await signIn(page);
  await nav(page).getByRole('link', { name: 'Models' }).click();
  await page.getByRole('link', { name: 'New model', exact: true }).click();
  await page.getByLabel('Name', { exact: true }).fill('Echo model');
  await page.getByLabel('URL').fill(atrium.standIn.openaiBaseUrl);
  await page.getByLabel('Base model').fill('gpt-test');
  await page.getByLabel('API key').fill(secret);
  await page.getByLabel('Context window (tokens)').fill('8192');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { name: 'Edit Echo model' })).toBeVisible();
  // The key is never sent back: the field is empty and the hint shows the mask only.
  await expect(page.getByLabel('API key')).toHaveValue('');
  await expect(page.getByText('A key is stored (••••3456)')).toBeVisible();
  expect(await page.content()).not.toContain(secret);

  await page.getByLabel('Test prompt').fill('ping from the browser');
  await page.getByRole('button', { name: 'Test connection' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toContainText('Echo: ping from the browser');

  atrium.standIn.set({ failStatus: 401 });
  await page.getByRole('button', { name: 'Test connection' }).click();
  const failed = page.getByRole('alert').filter({ hasText: 'Connection failed' });
  await expect(failed).toContainText('rejected the credentials');
  await expect(failed).toContainText('upstream 401');

  await page.getByRole('button', { name: 'Back to models' }).click();
  await expect(page.getByRole('list', { name: 'Team models' })).toContainText('Echo model');
});

test('models: an embedding model is made on the form, tested on its embeddings endpoint, and its failure shown', async ({ page, atrium }) => {
  const name = `Embedder ${Date.now()}`;
  await signIn(page);
  await nav(page).getByRole('link', { name: 'Models' }).click();
  await page.getByRole('link', { name: 'New model', exact: true }).click();
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Kind').selectOption('embedding');
  await expect(page.getByLabel('Protocol').getByRole('option', { name: /Anthropic/ })).toBeDisabled();
  await page.getByLabel('Vector size').fill('5');
  await page.getByLabel('URL').fill(atrium.standIn.openaiBaseUrl);
  await page.getByLabel('Base model').fill('embed-e2e');
  await page.getByLabel('API key').fill('sk-test-openai');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { name: `Edit ${name}` })).toBeVisible();
  await expect(page.getByLabel('Kind')).toHaveValue('embedding');
  await expect(page.getByLabel('Vector size')).toHaveValue('5');

  await page.getByRole('button', { name: 'Back to models' }).click();
  const row = page.getByRole('list', { name: 'Team models' }).getByRole('listitem').filter({ hasText: name });
  await expect(row).toContainText('embedding');
  await row.getByRole('button', { name: `Test connection of ${name}` }).click();
  await row.getByLabel('Text to embed').fill('how many holiday days do I get');
  const before = atrium.standIn.requests.length;
  await row.getByRole('button', { name: 'Test connection', exact: true }).click();
  await expect(row.getByRole('status')).toContainText('Connected');
  await expect(row.getByRole('status')).toContainText('vector of 5 dimensions');
  expect(atrium.standIn.requests.slice(before).map((r) => r.path)).toEqual(['/v1/embeddings']);

  atrium.standIn.set({ failEmbeddings: 401 });
  await row.getByRole('button', { name: 'Test connection', exact: true }).click();
  const failed = row.getByRole('alert').filter({ hasText: 'Connection failed' });
  await expect(failed).toContainText('rejected the credentials');
  await expect(failed).toContainText('upstream 401');
});

test('prompt logs: a row opens to its full prompt and response; search narrows; CSV follows the filter', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Logged ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Logged', modelIds: [model.id] });
  await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'the quarterly figures please' });
  await signIn(page);
  await nav(page).getByRole('link', { name: 'Logs' }).click();
  const table = page.getByRole('table', { name: 'Prompt logs' });
  await expect(table).toContainText('the quarterly figures please');
  await table
    .getByRole('button', { name: /Show the full prompt and response/ })
    .first()
    .click();
  await expect(table).toContainText('Echo: the quarterly figures please');

  await page.getByLabel('Search').fill('no such words anywhere');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page.getByText('No prompt log matches.')).toBeVisible();
  await expect(page.getByRole('link', { name: 'Download CSV' })).toHaveAttribute('href', /q=no\+such\+words\+anywhere/);
});

test('team and account: invite, change a role, remove; an API key shown once and revoked; a new team', async ({ page }) => {
  await signIn(page);
  await nav(page).getByRole('link', { name: 'Team' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Robin');
  await page.getByLabel('Email', { exact: true }).fill(`robin-${Date.now()}@example.test`);
  await page.getByRole('button', { name: 'Invite' }).click();
  const shown = page.getByRole('status', { name: 'Invitation for Robin' });
  await expect(shown).toContainText('Invite link');
  await expect(shown.getByRole('button', { name: 'Copy invite link' })).toBeVisible();

  const role = page.getByRole('combobox', { name: 'Role of Robin' });
  await role.selectOption('admin');
  await expect(role).toHaveValue('admin');
  await page.reload();
  await expect(page.getByRole('combobox', { name: 'Role of Robin' })).toHaveValue('admin');
  // Nobody changes their own role: there is no control for it.
  await expect(page.getByRole('combobox', { name: /Role of Admin/ })).toHaveCount(0);
  await page.getByRole('button', { name: 'Remove Robin' }).click();
  await page.getByRole('button', { name: 'Yes, remove' }).click();
  await expect(page.getByRole('list', { name: 'Users' })).not.toContainText('Robin');

  await page.getByLabel('Team name').fill('Research');
  await page.getByLabel("Owner's name").fill('Ada');
  await page.getByLabel("Owner's email").fill(`ada-${Date.now()}@example.test`);
  await page.getByRole('button', { name: 'Create team' }).click();
  await expect(page.getByRole('status', { name: 'Team Research created' })).toContainText("Owner's API key");

  await nav(page).getByRole('link', { name: 'Account' }).click();
  await page.getByLabel('Key name').fill('laptop script');
  await page.getByRole('button', { name: 'Create key' }).click();
  const fresh = page.getByRole('status', { name: 'New API key' });
  const key = (await fresh.locator('code').textContent())!;
  expect(key.length).toBeGreaterThan(20);
  await page.reload();
  expect(await page.content()).not.toContain(key);
  await page.getByRole('button', { name: 'Revoke key laptop script' }).click();
  await page.getByRole('button', { name: 'Yes, revoke' }).click();
  await expect(page.getByRole('list', { name: 'API keys' })).not.toContainText('laptop script');

  // A wrong current password is refused with the server's message.
  await page.getByLabel('Current password').fill('not my password');
  await page.getByLabel('New password', { exact: true }).fill('another long password');
  await page.getByLabel('New password again').fill('another long password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await expect(page.getByRole('alert')).toBeVisible();
});

test('a member sees no admin control, and the API refuses them when they try anyway', async ({ page, atrium }) => {
  const email = `member-${Date.now()}@example.test`;
  const password = 'member password 123';
  const member = await atrium.api<{ user: { id: number } }>('POST', '/api/v1/users', { name: 'Mo', email, role: 'member', password });
  const model = await createStandInModel(atrium, `Admin only ${Date.now()}`);
  await signInAs(page, email, password);

  await expect(nav(page).getByRole('link', { name: 'Team' })).toHaveCount(0);
  await nav(page).getByRole('link', { name: 'Models' }).click();
  await expect(page.getByRole('list', { name: 'Team models' })).toContainText(model.name);
  await expect(page.getByRole('link', { name: 'New model', exact: true })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^Test connection of/ })).toHaveCount(0);
  await expect(page.getByRole('link', { name: /^Edit / })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /Add .* to the team|Remove .* from the team/ })).toHaveCount(0);

  await page.goto('/team');
  await expect(page.getByRole('alert')).toContainText('Only the team');
  await expect(page.getByRole('button', { name: 'Invite' })).toHaveCount(0);

  expect(await callFromPage(page, 'GET', '/api/v1/users')).toBe(403);
  expect(await callFromPage(page, 'POST', '/api/v1/users', { name: 'X', email: 'x@example.test' })).toBe(403);
  expect(await callFromPage(page, 'PATCH', `/api/v1/users/${member.user.id}`, { role: 'admin' })).toBe(403);
  expect(await callFromPage(page, 'POST', `/api/v1/models/${model.id}/test`, { prompt: 'hi' })).toBe(403);
  expect(await callFromPage(page, 'POST', '/api/v1/models', { name: 'mine' })).toBe(403);
  expect(await callFromPage(page, 'POST', '/api/v1/teams', { name: 'T', ownerName: 'O', ownerEmail: 'o@example.test' })).toBe(403);
  // Their own account works.
  await nav(page).getByRole('link', { name: 'Account' }).click();
  await expect(page.getByRole('heading', { name: 'My API keys' })).toBeVisible();
});
