/**
 * The chat in a real browser: sign in, create a workspace, stream an answer, stop one, attach a
 * document and get its source, see provider failures, sign out.
 */
import { ADMIN_EMAIL } from './server.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

const answer = (page: import('@playwright/test').Page) => page.getByRole('article', { name: 'Answer' });

test('sign in, create a workspace, chat with a streamed answer, sign out', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Stand-in ${Date.now()}`);
  // A wrong password is refused with the server's message, and nothing is signed in.
  await page.goto('/');
  await page.getByLabel('Email').fill(ADMIN_EMAIL);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Workspaces' })).toHaveCount(0);

  await signIn(page);
  await page.getByRole('link', { name: 'New workspace' }).click();
  await page.getByLabel('Name').fill('Handbook questions');
  await page.getByRole('checkbox', { name: model.name }).check();
  await page.getByLabel('Greeting').fill('Welcome to the handbook.');
  await page.getByLabel('Sample prompts (one per line)').fill('What is the leave policy?');
  await page.getByRole('button', { name: 'Create workspace' }).click();

  await expect(page.getByText('Welcome to the handbook.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'What is the leave policy?' })).toBeVisible();

  // Streamed slowly enough to see the answer grow before it is done.
  atrium.standIn.set({ chunkDelayMs: 150, reply: 'The answer arrives word by word until it is complete.' });
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('first line');
  await box.press('Shift+Enter');
  await box.pressSequentially('second line');
  await expect(box).toHaveValue('first line\nsecond line');
  await box.press('Enter');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible();
  await expect(answer(page)).toContainText('The answer arrives');
  await expect(answer(page)).not.toContainText('complete.');
  await expect(answer(page)).toContainText('until it is complete.');
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
  await expect(page.getByRole('article', { name: 'Your message' })).toHaveText('first line\nsecond line');
  // The new thread is in the URL and the thread list, titled by its first message.
  await expect(page).toHaveURL(/\/w\/[0-9a-f-]+\/t\/[0-9a-f-]+$/);
  await expect(page.getByRole('navigation', { name: 'Chats' }).getByRole('link')).toHaveCount(1);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await page.reload();
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
});

test('Stop keeps the partial answer, marked interrupted, also after a reload', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Slow ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Slow answers', modelIds: [model.id] });
  const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
  atrium.standIn.set({ chunkDelayMs: 250, reply: words });
  await signIn(page);
  await page.goto(`/w/${ws.id}`);
  await page.getByRole('textbox', { name: 'Message' }).fill('Tell me a long story');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(answer(page)).toContainText('word2 ');
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(answer(page)).toContainText('Interrupted');
  const shown = await answer(page).locator('.markdown').innerText();
  expect(shown).not.toContain('word59');
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();

  // The server kept what arrived: the reopened thread shows it, marked interrupted.
  await expect(async () => {
    await page.reload();
    await expect(answer(page)).toContainText('Interrupted', { timeout: 2000 });
  }).toPass({ timeout: 20_000 });
  await expect(answer(page)).toContainText('word0 word1 word2');
  await expect(answer(page)).not.toContainText('word59');

  // Esc stops too.
  await page.getByRole('textbox', { name: 'Message' }).fill('Another long one');
  await page.keyboard.press('Enter');
  await expect(answer(page).last()).toContainText('word1 ');
  await page.keyboard.press('Escape');
  await expect(answer(page).last()).toContainText('Interrupted');
});

test('a document attached in the chat grounds the answer, with its source one click away; a rejected file says why', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Docs ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Documents', modelIds: [model.id] });
  await signIn(page);
  await page.goto(`/w/${ws.id}`);
  const doc = '# Travel policy\n\nEmployees book flights through the zeppelin desk. Economy class applies to trips under six hours.\n';
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Attach files' }).click();
  await (
    await chooser
  ).setFiles([
    { name: 'travel.md', mimeType: 'text/markdown', buffer: Buffer.from(doc) },
    { name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]) },
  ]);
  const files = page.getByRole('list', { name: 'Attached files' });
  await expect(files.getByRole('listitem').filter({ hasText: 'travel.md' })).toContainText('attached');
  await expect(files.getByRole('alert')).toContainText('photo.png was not added');

  await page.getByRole('textbox', { name: 'Message' }).fill('Who books flights through the zeppelin desk?');
  await page.getByRole('button', { name: 'Send' }).click();
  const sources = answer(page).getByRole('region', { name: 'Sources' });
  await expect(sources).toContainText('travel.md');
  // The model was given the document's text.
  const sent = JSON.stringify(atrium.standIn.requests.at(-1)?.body ?? '');
  expect(sent).toContain('zeppelin desk');

  // collapsed under the answer until opened
  await expect(sources.getByRole('button', { name: /Show source 1/ })).toBeHidden();
  await sources.getByText('Sources (1)').click();
  await sources.getByRole('button', { name: /Show source 1/ }).click();
  const dialog = page.getByRole('dialog', { name: 'travel.md' });
  await expect(dialog).toContainText('Economy class applies to trips under six hours.');
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(dialog).toHaveCount(0);

  // Reopened, the thread still shows the answer's sources.
  await page.reload();
  await expect(answer(page).getByRole('region', { name: 'Sources' })).toContainText('travel.md');
});

test('provider failures and a lost connection are shown in the conversation', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Failing ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Failures', modelIds: [model.id] });
  await signIn(page);
  await page.goto(`/w/${ws.id}`);
  const box = page.getByRole('textbox', { name: 'Message' });

  atrium.standIn.set({ failStatus: 500 });
  await box.fill('Hello?');
  await box.press('Enter');
  await expect(answer(page).getByRole('alert')).toHaveText('The model provider answered 500.');
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();

  atrium.standIn.set({ failStatus: 429, retryAfter: '7' });
  await box.fill('Again?');
  await box.press('Enter');
  await expect(answer(page).last().getByRole('alert')).toHaveText('The model provider is rate limiting requests (429). Try again in a moment.');

  atrium.standIn.set({ failStatus: null, breakStreamAfter: 2, reply: 'one two three four five six' });
  await box.fill('And now?');
  await box.press('Enter');
  await expect(answer(page).last().getByRole('alert')).toBeVisible();
  await expect(answer(page).last()).toContainText('one');

  // A failed answer offers Retry (in place of Regenerate), which asks again (the stand-in is healthy now).
  atrium.standIn.reset();
  await expect(page.getByRole('button', { name: 'Regenerate' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Retry' }).click();
  await expect(answer(page).last()).toContainText('Echo: And now?');

  // A failed answer is kept: after a reload it still says what failed, and Retry asks again.
  atrium.standIn.set({ failStatus: 500 });
  await box.fill('Still there?');
  await box.press('Enter');
  await expect(answer(page).last().getByRole('alert')).toContainText('The model provider answered 500');
  atrium.standIn.reset();
  await page.reload();
  await expect(answer(page).last().getByRole('alert')).toContainText('The model provider answered 500');
  await expect(page.getByRole('button', { name: 'Regenerate' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Retry' }).click();
  await expect(answer(page).last()).toContainText('Echo: Still there?');
});

test('threads are listed newest first, renamed and deleted; the model picker chooses who answers', async ({ page, atrium }) => {
  const first = await createStandInModel(atrium, `Alpha ${Date.now()}`);
  const second = await createStandInModel(atrium, `Beta ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Threads', modelIds: [first.id, second.id] });
  for (const prompt of ['Older question', 'Newer question']) await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt });
  await signIn(page);
  await page.goto(`/w/${ws.id}`);
  const list = page.getByRole('navigation', { name: 'Chats' }).getByRole('link');
  await expect(list).toHaveText(['Newer question', 'Older question']);

  await page.getByRole('button', { name: 'Rename Older question' }).click();
  await page.getByLabel('Chat title').fill('Renamed chat');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('navigation', { name: 'Chats' }).getByRole('link', { name: 'Renamed chat' })).toBeVisible();

  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Delete Newer question' }).click();
  await expect(list).toHaveText(['Renamed chat']);
  // Stored, not only shown: the API agrees.
  const threads = await atrium.api<Array<{ title: string }>>('GET', `/api/v1/chat/${ws.id}/history`);
  expect(threads.map((t) => t.title)).toEqual(['Renamed chat']);

  // The thread's history is held back until the model is picked: arriving later, it must not put
  // back the model the thread was last answered by over the person's choice.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const threadHistory = (url: URL) => url.pathname.startsWith(`/api/v1/chat/${ws.id}/history/`);
  await page.route(threadHistory, async (route) => {
    await held;
    await route.continue();
  });
  await page.getByRole('link', { name: 'Renamed chat' }).click();
  await page.getByRole('combobox', { name: 'Model' }).selectOption({ label: second.name });
  release();
  await expect(page.getByText('Older question').first()).toBeVisible();
  await page.unroute(threadHistory);
  await expect(page.getByRole('combobox', { name: 'Model' })).toHaveValue(second.id);
  await page.getByRole('textbox', { name: 'Message' }).fill('Who answers?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(answer(page).last()).toContainText('Echo: Who answers?');
  await expect(answer(page).last()).toContainText(second.name);
});
