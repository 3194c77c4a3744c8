/**
 * The Usage screen against the real routes (GET /usage, /me/usage, budgets CRUD): an owner
 * sees the team's usage by day, user and model after chat turns through the stand-in provider, and
 * adds, changes and deletes budgets; a refused budget shows the API's message; a member sees only
 * their own usage and the budgets that apply to them, with no control to change them, and the API
 * refuses them when they try anyway.
 */
import type { Locator } from '@playwright/test';
import { callFromPage, expect, nav, signIn, signInAs, test } from './fixtures.js';

/** The numbers of a usage table row: requests, prompt tokens, answer tokens, credits. */
async function numbers(row: Locator): Promise<number[]> {
  await expect(row).toHaveCount(1);
  const cells = await row.getByRole('cell').allTextContents();
  return cells.slice(1).map((c) => Number(c.replace(/,/g, '')));
}

test('usage: by day, user and model after real turns; budgets added, changed, refused and deleted; a member sees only their own', async ({ page, atrium }) => {
  const stamp = Date.now();
  // 1 credit per token, so a row's credits are its prompt plus answer tokens
  const model = await atrium.api<{ id: string; name: string }>('POST', '/api/v1/models', {
    name: `Metered ${stamp}`,
    apiBase: 'OPENAI',
    connectionType: 'URL',
    url: atrium.standIn.openaiBaseUrl,
    baseModel: 'gpt-test',
    apiKey: 'sk-test-openai',
    contextWindow: 8192,
    chatCredits: 1000,
  });
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: `Metered ${stamp}`, modelIds: [model.id] });
  const email = `uma-${stamp}@example.test`;
  const password = 'uma password 12345';
  const uma = await atrium.api<{ user: { id: number }; apiKey: string }>('POST', '/api/v1/users', { name: 'Uma Usage', email, role: 'member', password });
  for (const prompt of ['first question of the owner', 'second question of the owner'])
    await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt });
  const res = await fetch(`${atrium.url}/api/v1/chat/${ws.id}/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${uma.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'a question from Uma' }),
  });
  expect(res.status, await res.text()).toBe(200);

  await signIn(page);
  await nav(page).getByRole('link', { name: 'Usage' }).click();
  await expect(page.getByText('Every call made in the team.')).toBeVisible();
  const today = new Date().toISOString().slice(0, 10);
  const byDay = page.getByRole('table', { name: 'Usage by day' }).getByRole('row').filter({ hasText: today });
  expect((await numbers(byDay))[0]).toBeGreaterThanOrEqual(3);

  const groupBy = async (label: string) => {
    await page.getByLabel('Group by').selectOption({ label });
    await page.getByRole('button', { name: 'Show' }).click();
  };
  await groupBy('Model');
  const modelRow = page.getByRole('table', { name: 'Usage by model' }).getByRole('row').filter({ hasText: model.name });
  const [requests, promptTokens, answerTokens, credits] = await numbers(modelRow);
  expect(requests).toBe(3);
  expect(promptTokens).toBeGreaterThan(0);
  expect(answerTokens).toBeGreaterThan(0);
  expect(credits).toBe(promptTokens! + answerTokens!);
  await groupBy('User');
  const umaRow = page.getByRole('table', { name: 'Usage by user' }).getByRole('row').filter({ hasText: 'Uma Usage' });
  expect((await numbers(umaRow))[0]).toBe(1);
  await expect(page.getByRole('link', { name: 'Download CSV' })).toHaveAttribute('href', /groupBy=user/);

  // add a budget for Uma, change it in place, and see a duplicate refused with the API's message
  const form = page.getByRole('form', { name: 'New budget' });
  await form.getByLabel('Applies to').selectOption('user');
  await form.getByLabel('User').selectOption({ label: `Uma Usage (${email})` });
  await form.getByLabel('Period').selectOption('day');
  await form.getByLabel('Credits').fill('50');
  await form.getByRole('button', { name: 'Add budget' }).click();
  const budgets = page.getByRole('table', { name: 'Budgets' });
  const umaBudget = budgets.getByRole('row').filter({ hasText: 'Uma Usage' });
  await expect(umaBudget).toContainText('50');
  await expect(umaBudget).toContainText('Day');

  await form.getByLabel('Credits').fill('75');
  await form.getByRole('button', { name: 'Add budget' }).click();
  await expect(form.getByRole('alert')).toContainText('A day budget for this user exists already');

  await budgets.getByRole('button', { name: 'Edit Uma Usage day budget' }).click();
  const edit = page.getByRole('form', { name: 'Edit Uma Usage day budget' });
  await edit.getByLabel('Credits').fill('');
  await edit.getByLabel('Requests per minute').fill('');
  await edit.getByRole('button', { name: 'Save budget' }).click();
  await expect(edit.getByRole('alert')).toContainText('delete it instead');
  await edit.getByLabel('Credits').fill('500');
  await edit.getByLabel('Requests per minute').fill('12');
  await edit.getByRole('button', { name: 'Save budget' }).click();
  await expect(edit).toHaveCount(0);
  await expect(umaBudget.getByRole('cell').nth(2)).toHaveText('500');
  await expect(umaBudget.getByRole('cell').nth(4)).toHaveText('12');
  const stored = await atrium.api<Array<{ scope: string; scopeId: string; credits: number | null; requestsPerMinute: number | null }>>(
    'GET',
    '/api/v1/budgets',
  );
  expect(stored.filter((b) => b.scope === 'user' && b.scopeId === String(uma.user.id))).toMatchObject([{ credits: 500, requestsPerMinute: 12 }]);

  // a team budget added and deleted
  await form.getByLabel('Applies to').selectOption('team');
  await form.getByLabel('Period').selectOption('total');
  await form.getByLabel('Requests per minute').fill('1000');
  await form.getByRole('button', { name: 'Add budget' }).click();
  // another spec may hold a team day budget on the shared server: this one is the total budget
  const teamBudget = budgets.getByRole('row').filter({ hasText: 'Whole team' }).filter({ hasText: 'Total' });
  await expect(teamBudget).toContainText('never');
  await budgets.getByRole('button', { name: 'Delete Whole team total budget' }).click();
  await budgets.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(teamBudget).toHaveCount(0);
  const umaBudgetId = (await atrium.api<Array<{ id: string; scope: string }>>('GET', '/api/v1/budgets')).find((b) => b.scope === 'user')!.id;

  // Uma: her own usage only, her budget read-only, no way to change one
  await page.context().clearCookies();
  await signInAs(page, email, password);
  await nav(page).getByRole('link', { name: 'Usage' }).click();
  await expect(page.getByText('Your own calls.')).toBeVisible();
  await expect(page.getByLabel('Group by').getByRole('option', { name: 'User' })).toHaveCount(0);
  await groupBy('Model');
  expect((await numbers(page.getByRole('table', { name: 'Usage by model' }).getByRole('row').filter({ hasText: model.name })))[0]).toBe(1);
  const mine = page.getByRole('table', { name: 'Budgets that apply to me' });
  await expect(mine.getByRole('row').filter({ hasText: 'You' }).filter({ hasText: 'Day' })).toContainText('500');
  await expect(page.getByRole('heading', { name: 'New budget' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^(Edit|Delete) / })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Add budget' })).toHaveCount(0);
  expect(await callFromPage(page, 'PATCH', `/api/v1/budgets/${umaBudgetId}`, { credits: 1_000_000 })).toBe(403);
  expect(await callFromPage(page, 'DELETE', `/api/v1/budgets/${umaBudgetId}`)).toBe(403);
  expect(await callFromPage(page, 'POST', '/api/v1/budgets', { scope: 'user', scopeId: uma.user.id, period: 'month', credits: 1 })).toBe(403);
  const own = await page.evaluate(async () => (await (await fetch('/api/v1/usage?groupBy=user')).json()) as Array<{ key: string }>);
  expect(own.map((r) => r.key)).toEqual([String(uma.user.id)]);
});
