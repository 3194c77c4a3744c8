/**
 * Organisation controls in a real browser: pinning a chat from the chat list, the team's retention
 * and SCIM token in the team settings, and the audit log screen with its filters and CSV download.
 */
import { checkScreen } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, nav, signIn, signInAs, test } from './fixtures.js';

test('pin a chat, set the retention, read and download the audit log; a member has no audit log', async ({ page, atrium }) => {
  const stamp = Date.now();
  const model = await createStandInModel(atrium, `Echo ${stamp}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: `Audit ${stamp}`, modelIds: [model.id] });
  const turn = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'A chat to keep' });
  const email = `mo-${stamp}@example.test`;
  await atrium.api('POST', '/api/v1/users', { name: 'Mo Member', email, role: 'member', password: 'mo password 12345' });

  await signIn(page);
  await page.goto(`/w/${ws.id}/t/${turn.threadId}`);
  const chats = page.getByRole('navigation', { name: 'Chats' });
  const pin = chats.getByRole('button', { name: /^Pin / });
  await expect(pin).toHaveAttribute('aria-pressed', 'false');
  await pin.click();
  await expect(pin).toHaveAttribute('aria-pressed', 'true');
  await expect(chats.getByText('Pinned:')).toHaveCount(1);

  await nav(page).getByRole('link', { name: 'Team' }).click();
  await page.getByLabel('Keep chats (days)').fill('90');
  await page.getByLabel('Keep prompt logs (days)').fill('30');
  await page.getByRole('button', { name: 'Save retention' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await page.reload();
  await expect(page.getByLabel('Keep chats (days)')).toHaveValue('90');
  await page.getByRole('button', { name: 'Create SCIM token' }).click();
  const shown = page.getByRole('status', { name: 'SCIM token' });
  await expect(shown).toContainText(/scim_[A-Za-z0-9_-]{20,}/);
  const scimToken = (await shown.locator('code').textContent())!;
  const users = await page.evaluate(
    async (tok) => (await fetch('/scim/v2/Users', { headers: { authorization: `Bearer ${tok}` } })).json() as Promise<{ totalResults: number }>,
    scimToken,
  );
  expect(users.totalResults).toBeGreaterThanOrEqual(2);

  await nav(page).getByRole('link', { name: 'Audit log' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Audit log' })).toBeVisible();
  const table = page.getByRole('table', { name: 'Audit log' });
  await expect(table).toContainText('team.update');
  await expect(table).toContainText('auth.login');
  await page.getByRole('combobox', { name: 'Action' }).selectOption('thread');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(table.getByRole('row')).toHaveCount(2);
  await expect(table).toContainText('pinned: true');
  await checkScreen(page, 'audit', 'light');
  const download = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Download CSV' }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe('audit.csv');

  await page.context().clearCookies();
  await signInAs(page, email, 'mo password 12345');
  await expect(nav(page).getByRole('link', { name: 'Audit log' })).toHaveCount(0);
  await page.goto('/audit');
  await expect(page.getByRole('alert')).toContainText('Only the team');
});
