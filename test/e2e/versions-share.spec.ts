/**
 * Versions and sharing in the browser: editing a question keeps both versions, navigable with
 * "Previous version" / "Next version", and the thread continues from the one shown; "Regenerate"
 * adds an answer without repeating the question; "Share" makes a link that opens signed out and
 * dies when revoked. The changed screens pass the screen checks at desktop and phone width in light
 * and dark; with E2E_SHOTS=<dir> each is saved as a PNG.
 */
import type { Page } from '@playwright/test';
import { everyView } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

const questions = (page: Page) => page.getByRole('article', { name: 'Your message' });
const answers = (page: Page) => page.getByRole('article', { name: 'Answer' });

async function ask(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'Message', exact: true }).fill(text);
  await page.keyboard.press('Enter');
  await expect(answers(page).last()).toContainText(`Echo: ${text}`);
}

test('an edited question keeps both versions, and the thread continues from the one shown; regenerate never repeats the question', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Versions ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Versions desk', modelIds: [model.id] });
  await signIn(page);
  await page.goto(`/w/${ws.id}`);
  await ask(page, 'How tall is a giraffe?');
  await ask(page, 'And an okapi?');

  // edit the second question
  await questions(page).nth(1).getByRole('button', { name: 'Edit' }).click();
  const editor = page.getByRole('textbox', { name: 'Edit your question' });
  await editor.fill('And a zebra?');
  await page.getByRole('button', { name: 'Save and ask' }).click();
  await expect(answers(page).last()).toContainText('Echo: And a zebra?');
  await expect(questions(page)).toHaveCount(2);
  const second = questions(page).nth(1);
  await expect(second).toContainText('And a zebra?');
  await expect(second.getByRole('group', { name: 'Versions of this question' })).toContainText('2 / 2');
  await everyView(page, 'chat-versions');

  // back to the first version: its own answer comes with it
  await second.getByRole('button', { name: 'Previous version' }).click();
  await expect(questions(page).nth(1)).toContainText('And an okapi?');
  await expect(questions(page).nth(1).getByRole('group', { name: 'Versions of this question' })).toContainText('1 / 2');
  await expect(answers(page).last()).toContainText('Echo: And an okapi?');
  await expect(questions(page).nth(1).getByRole('button', { name: 'Previous version' })).toBeDisabled();

  // the thread continues from the version shown
  await ask(page, 'Which one is faster?');
  const threadId = new URL(page.url()).pathname.split('/').at(-1)!;
  const thread = await atrium.api<{ messages: Array<{ content: string }> }>('GET', `/api/v1/chat/${ws.id}/history/${threadId}`);
  expect(thread.messages.map((m) => m.content)).toEqual([
    'How tall is a giraffe?',
    'Echo: How tall is a giraffe?',
    'And an okapi?',
    'Echo: And an okapi?',
    'Which one is faster?',
    'Echo: Which one is faster?',
  ]);
  // and the next version is still there
  await questions(page).nth(1).getByRole('button', { name: 'Next version' }).click();
  await expect(questions(page).nth(1)).toContainText('And a zebra?');
  await expect(questions(page)).toHaveCount(2);

  // regenerate: a second answer, the question not asked again
  atrium.standIn.set({ reply: 'Zebras are about 1.4 m tall.' });
  await page.getByRole('button', { name: 'Regenerate' }).click();
  await expect(answers(page).last()).toContainText('Zebras are about 1.4 m tall.');
  await expect(questions(page)).toHaveCount(2);
  await expect(answers(page).last().getByRole('group', { name: 'Versions of this answer' })).toContainText('2 / 2');
  await page.reload();
  await expect(questions(page)).toHaveCount(2);
  await expect(answers(page)).toHaveCount(2);
  await expect(answers(page).last()).toContainText('Zebras are about 1.4 m tall.');
  await answers(page).last().getByRole('button', { name: 'Previous version' }).click();
  await expect(answers(page).last()).toContainText('Echo: And a zebra?');
  await expect(questions(page)).toHaveCount(2);
});

test('a shared link opens signed out and dies when revoked', async ({ page, atrium, browser }) => {
  const model = await createStandInModel(atrium, `Sharer ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Share desk', modelIds: [model.id] });
  atrium.standIn.set({ reply: 'Use **bold** moves. <script>window.__pwned=1</script><a href="javascript:window.__pwned=1">link</a>' });
  const first = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'How do I <b>win</b> at chess?' });
  await signIn(page);
  await page.goto(`/w/${ws.id}/t/${first.threadId}`);
  await expect(answers(page).last()).toContainText('Use bold moves.');

  await page.getByRole('button', { name: 'Share', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Share this chat' });
  await dialog.getByRole('button', { name: 'Create link' }).click();
  const link = dialog.getByRole('textbox', { name: 'Share link' });
  await expect(link).toHaveValue(/\/share\/[A-Za-z0-9_-]{43}$/);
  const url = await link.inputValue();
  await expect(dialog.getByRole('button', { name: 'Copy share link' })).toBeVisible();
  await everyView(page, 'chat-share');

  // a browser with no session reads it
  const stranger = await browser.newContext();
  const anon = await stranger.newPage();
  const res = await anon.goto(url);
  expect(res?.status()).toBe(200);
  await expect(anon.getByRole('heading', { name: 'How do I <b>win</b> at chess?' })).toBeVisible();
  await expect(anon.getByRole('article', { name: 'Question' })).toContainText('How do I <b>win</b> at chess?');
  await expect(anon.getByRole('article', { name: 'Answer' }).locator('strong')).toHaveText('bold');
  expect(await anon.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  await everyView(anon, 'shared-thread');

  // revoked: the page is gone at once
  await dialog.getByRole('button', { name: 'Revoke link' }).click();
  await expect(dialog.getByRole('button', { name: 'Create link' })).toBeVisible();
  const gone = await anon.goto(url);
  expect(gone?.status()).toBe(404);
  await expect(anon.getByRole('heading', { name: 'This shared chat is not available' })).toBeVisible();
  await stranger.close();

  // the team's owner turns sharing off on the Team screen: a new link is refused, saying why
  await page.goto('/team');
  const allowed = page.getByRole('checkbox', { name: /Members may share chats by link/ });
  await expect(allowed).toBeChecked();
  await everyView(page, 'team-sharing');
  await allowed.uncheck();
  await expect(allowed).not.toBeChecked();
  await page.goto(`/w/${ws.id}/t/${first.threadId}`);
  await page.getByRole('button', { name: 'Share', exact: true }).click();
  await page.getByRole('dialog', { name: 'Share this chat' }).getByRole('button', { name: 'Create link' }).click();
  await expect(page.getByRole('dialog', { name: 'Share this chat' })).toContainText('Sharing is turned off for this team');
  await atrium.api('PUT', '/api/v1/chat/sharing', { enabled: true });
});
