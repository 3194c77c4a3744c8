/**
 * Finding one's way in conversations: long threads paged in as the reader scrolls up (their place
 * kept), the model of a thread kept after a reload, the thread list grouped by day, sources
 * collapsed under the answer and opened by its [n] citations (also past 9), Esc closing the chats
 * drawer on a phone, and these states passing the screen checks in light and dark. With
 * E2E_SHOTS=<dir> each state is saved as a PNG for a person to look at.
 */
import path from 'node:path';
import type { Page } from '@playwright/test';
import { checkScreen } from './checks.js';
import { createStandInModel, type AtriumServer } from './server.js';
import { expect, signIn, test } from './fixtures.js';

const answer = (page: Page) => page.getByRole('article', { name: 'Answer' });
const conversation = (page: Page) => page.getByRole('log', { name: 'Conversation' });
const shots = process.env.E2E_SHOTS;

/** A model with a window large enough for a dozen passages of context. */
function bigModel(atrium: AtriumServer, name: string) {
  return atrium.api<{ id: string; name: string }>('POST', '/api/v1/models', {
    name,
    apiBase: 'OPENAI',
    connectionType: 'URL',
    url: atrium.standIn.openaiBaseUrl,
    baseModel: 'gpt-test',
    apiKey: 'sk-test-openai',
    contextWindow: 128_000,
  });
}

/** A public document set holding `text` as `filename`, made from the signed-in page. */
function documentSet(page: Page, title: string, filename: string, text: string): Promise<string> {
  return page.evaluate(
    async ([t, f, body]) => {
      const form = new FormData();
      form.append('title', t);
      form.append('isPublic', 'true');
      const made = (await (await fetch('/api/v1/plus', { method: 'POST', body: form })).json()) as { id: string };
      const files = new FormData();
      files.append('files', new File([body], f, { type: 'text/markdown' }));
      const res = await fetch(`/api/v1/plus/${made.id}/add-file`, { method: 'POST', body: files });
      if (!res.ok) throw new Error(`add-file ${res.status}`);
      return made.id;
    },
    [title, filename, text] as const,
  );
}

/** Fourteen sections, each a chunk of its own size, each naming the zeppelin desk once. */
const HANDBOOK = Array.from({ length: 14 }, (_, i) => {
  const filler = Array.from({ length: 48 }, (_, k) => `Rule ${i + 1}.${k + 1} keeps travel orderly and receipts complete.`).join(' ');
  return `# Travel rule ${i + 1}\n\nThe zeppelin desk handles case ${i + 1}. ${filler}\n`;
}).join('\n');

test('a long thread opens at its end and pages in earlier messages as the reader scrolls up, keeping their place', async ({ page, atrium }) => {
  test.setTimeout(180_000);
  const model = await createStandInModel(atrium, `Pager ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Long talk', modelIds: [model.id] });
  let threadId: string | undefined;
  for (let i = 1; i <= 40; i++) {
    const turn = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, {
      prompt: `question ${i}`,
      ...(threadId ? { threadId } : {}),
    });
    threadId = turn.threadId;
  }
  await signIn(page);
  await page.goto(`/w/${ws.id}/t/${threadId}`);
  const messages = conversation(page).locator('article.message');
  // The last page: 30 of the 80 messages, the newest in view.
  await expect(messages).toHaveCount(30);
  await expect(answer(page).last()).toHaveText(/Echo: question 40/);
  await expect(answer(page).last()).toBeInViewport();
  await expect(conversation(page).getByText('question 1', { exact: true })).toHaveCount(0);

  // Scrolling to the top brings the page before it; what was first stays where the reader saw it.
  const firstShown = page.getByRole('article', { name: 'Your message' }).filter({ hasText: /^question 26$/ });
  const scrollToTop = () => conversation(page).evaluate((el) => el.scrollTo({ top: 0 }));
  await scrollToTop();
  await expect(messages).toHaveCount(60);
  await expect(firstShown).toBeInViewport();
  // Not pushed down out of the reader's sight, nor left at the very top with the new page above it.
  const top = await firstShown.evaluate((el) => el.getBoundingClientRect().top - el.closest('.conversation')!.getBoundingClientRect().top);
  expect(top).toBeGreaterThanOrEqual(0);
  expect(top).toBeLessThan(200);

  await scrollToTop();
  await expect(messages).toHaveCount(80);
  await expect(page.getByRole('article', { name: 'Your message' }).first()).toHaveText('question 1');
  await expect(page.getByRole('button', { name: /Show earlier messages/ })).toHaveCount(0);
  // In order, each message once.
  const questions = await page.getByRole('article', { name: 'Your message' }).allTextContents();
  expect(questions).toEqual(Array.from({ length: 40 }, (_, i) => `question ${i + 1}`));
});

test('a long new answer is shown from its start, not scrolled past it', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Long ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Long answers', modelIds: [model.id] });
  await signIn(page);
  await page.goto(`/w/${ws.id}`);
  atrium.standIn.set({ reply: Array.from({ length: 120 }, (_, i) => `Line ${i + 1} of a long answer.`).join('\n\n') });
  await page.getByRole('textbox', { name: 'Message' }).fill('Tell me everything');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(answer(page).last()).toContainText('Line 120 of a long answer.');
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
  const last = answer(page).last();
  await expect(last.getByText('Line 1 of a long answer.', { exact: true })).toBeInViewport();
  await expect(last.getByText('Line 120 of a long answer.', { exact: true })).not.toBeInViewport();
});

test('the model chosen in a thread stays chosen after a reload; each thread shows its own', async ({ page, atrium }) => {
  const alpha = await createStandInModel(atrium, `Alpha ${Date.now()}`);
  const beta = await createStandInModel(atrium, `Beta ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Two models', modelIds: [alpha.id, beta.id] });
  const byAlpha = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'Asked of the first model' });
  await signIn(page);
  await page.goto(`/w/${ws.id}`);
  const picker = page.getByRole('combobox', { name: 'Model' });
  await picker.selectOption({ label: beta.name });
  await page.getByRole('textbox', { name: 'Message' }).fill('Which model answers?');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(answer(page).last()).toContainText('Echo: Which model answers?');
  await expect(page).toHaveURL(/\/t\//);

  await page.reload();
  await expect(answer(page).last()).toContainText(beta.name);
  await expect(picker).toHaveValue(beta.id);
  // Another thread, answered by the first model, shows that one; back again, the second.
  await page.getByRole('link', { name: 'Asked of the first model' }).click();
  await expect(page).toHaveURL(new RegExp(byAlpha.threadId));
  await expect(picker).toHaveValue(alpha.id);
  await page.getByRole('link', { name: 'Which model answers?' }).click();
  await expect(picker).toHaveValue(beta.id);
});

test('sources are collapsed under the answer; a citation [n] opens them at source n, also past 9; the list groups chats by day', async ({ page, atrium }) => {
  test.setTimeout(180_000);
  const model = await bigModel(atrium, `Cites ${Date.now()}`);
  await signIn(page);
  const plusId = await documentSet(page, 'Travel handbook', 'handbook.md', HANDBOOK);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Travel', modelIds: [model.id], plusIds: [plusId] });
  atrium.standIn.set({ reply: 'Book through the zeppelin desk [1]. Late claims follow rule ten [10], see also [2, 3]. Not a source: `[4]` and [99].' });
  await page.goto(`/w/${ws.id}`);
  await page.getByRole('textbox', { name: 'Message' }).fill('Who handles cases at the zeppelin desk?');
  await page.getByRole('button', { name: 'Send' }).click();

  const last = answer(page).last();
  await expect(last.getByRole('button', { name: 'Source 1: handbook.md' })).toBeVisible();
  // the model was given the passages numbered, past 9
  const sent = JSON.stringify(atrium.standIn.requests.at(-1)?.body ?? '');
  expect(sent).toContain('### [10] From handbook.md');
  await expect(last.getByRole('button', { name: 'Source 10: handbook.md' })).toHaveText('10');
  await expect(last.getByRole('button', { name: /^Source (2|3): / })).toHaveCount(2);
  // code stays code, and a number beyond the sources stays text
  await expect(last.locator('code')).toHaveText('[4]');
  await expect(last).toContainText('[99]');

  const sources = last.getByRole('region', { name: 'Sources' });
  await expect(sources.getByText(/^Sources \(\d+\)$/)).toBeVisible();
  await expect(sources.getByRole('button', { name: /^Show source 1:/ })).toBeHidden();
  await last.getByRole('button', { name: 'Source 10: handbook.md' }).click();
  const ten = sources.getByRole('button', { name: 'Show source 10: handbook.md' });
  await expect(ten).toBeFocused();
  await expect(sources.locator('li[data-source="10"] .source-n')).toHaveText('[10]');
  await shoot(page, 'chat-sources-open');
  await ten.click();
  const dialog = page.getByRole('dialog', { name: 'handbook.md' });
  await expect(dialog).toContainText('zeppelin desk');
  await dialog.getByRole('button', { name: 'Close' }).click();
  // Collapsed again with its summary; still there after a reload.
  await sources.getByText(/^Sources \(\d+\)$/).click();
  await expect(ten).toBeHidden();
  await page.reload();
  await expect(
    answer(page)
      .last()
      .getByRole('region', { name: 'Sources' })
      .getByText(/^Sources \(\d+\)$/),
  ).toBeVisible();
  await expect(answer(page).last().getByRole('button', { name: 'Source 10: handbook.md' })).toBeVisible();

  // The chat list groups chats by their last activity: seen from tomorrow, this one is yesterday's.
  const chats = page.getByRole('navigation', { name: 'Chats' });
  await expect(chats.getByRole('heading', { name: 'Today' })).toBeVisible();
  await expect(chats.getByRole('list', { name: 'Today' }).getByRole('link', { name: 'Who handles cases at the zeppelin desk?' })).toHaveAttribute(
    'title',
    'Who handles cases at the zeppelin desk?',
  );
  await page.clock.setFixedTime(Date.now() + 86_400_000);
  await page.reload();
  await expect(chats.getByRole('heading', { name: 'Yesterday' })).toBeVisible();
  await expect(chats.getByRole('heading', { name: 'Today' })).toHaveCount(0);
});

test('phone: Esc closes the chats drawer and gives the focus back; the drawer, the document picker and a long answer pass the screen checks', async ({
  page,
  atrium,
}) => {
  test.setTimeout(300_000);
  const model = await createStandInModel(atrium, `Phone ${Date.now()}`);
  await signIn(page);
  const plusId = await documentSet(
    page,
    'Expenses and the long name of a document set that wraps',
    'expenses.md',
    '# Expenses\n\nThe zeppelin desk refunds receipts within ten days.\n',
  );
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Phone', modelIds: [model.id], plusIds: [plusId] });
  atrium.standIn.set({
    reply: [
      'The zeppelin desk refunds receipts [1].',
      '',
      '```ts',
      "const refund = await desk.refund({ receipt: 'R-2026-000123', amount: 1234.56, currency: 'EUR', note: 'a long line that needs scrolling' });",
      '```',
      '',
      '| kind | days | who approves | where it is filed | notes |',
      '|---|---|---|---|---|',
      '| receipts | 10 | the team lead of the traveller | the zeppelin desk archive | scanned copies are fine |',
    ].join('\n'),
  });
  const { threadId } = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'How are receipts refunded?' });

  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const size of ['phone', 'desktop'] as const) {
      await page.setViewportSize(size === 'phone' ? { width: 390, height: 844 } : { width: 1280, height: 800 });
      await page.goto(`/w/${ws.id}/t/${threadId}`);
      const last = answer(page).last();
      await expect(last).toContainText('refunds receipts');
      // the table scrolls in its own box; the code block keeps its Copy button in view
      await expect(last.getByRole('region', { name: 'Table' })).toBeVisible();
      await expect(last.getByRole('button', { name: 'Copy code' })).toBeInViewport();
      await last.getByText(/^Sources \(1\)$/).click();
      await checkScreen(page, `chat-answer-${size}-${scheme}`, scheme);
      await shoot(page, `chat-answer-${size}-${scheme}`);

      await page.getByText(/^Docs/).click();
      await expect(page.getByRole('checkbox', { name: /Expenses and the long name/ })).toBeInViewport();
      await checkScreen(page, `chat-docs-${size}-${scheme}`, scheme);
      await shoot(page, `chat-docs-${size}-${scheme}`);
      await page.keyboard.press('Escape');
      await expect(page.getByRole('checkbox', { name: /Expenses and the long name/ })).toBeHidden();

      if (size === 'phone') {
        const toggle = page.getByRole('button', { name: 'Chats', exact: true });
        const drawer = page.getByRole('complementary', { name: 'Chats of this workspace' });
        await expect(drawer).toBeHidden();
        await toggle.click();
        await expect(drawer).toBeVisible();
        await expect(drawer.getByRole('combobox', { name: 'Workspace' })).toBeFocused();
        await checkScreen(page, `chat-drawer-${size}-${scheme}`, scheme);
        await shoot(page, `chat-drawer-${size}-${scheme}`);
        await page.keyboard.press('Escape');
        await expect(drawer).toBeHidden();
        await expect(toggle).toBeFocused();
        await expect(toggle).toHaveAttribute('aria-expanded', 'false');
      }
    }
  }
});

async function shoot(page: Page, name: string): Promise<void> {
  if (shots) await page.screenshot({ path: path.join(shots, `${name}.png`) });
}
