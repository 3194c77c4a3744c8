/**
 * Screenshots of issue 13's screens at desktop (1280×800) and phone (375×812) widths in light and
 * dark, for a person to look at: `ATRIUM_SHOTS_DIR=/tmp/shots npm run test:e2e -- admin-screens`.
 * Skipped without the variable (it asserts nothing the other specs do not).
 */
import path from 'node:path';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';

const dir = process.env.ATRIUM_SHOTS_DIR;

test('screenshots of the documents, models, logs, usage, team and account screens', async ({ page, atrium }) => {
  test.skip(!dir, 'set ATRIUM_SHOTS_DIR to take screenshots');
  test.setTimeout(300_000);
  const model = await createStandInModel(atrium, 'Echo (stand-in)');
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Handbook', modelIds: [model.id] });
  for (const q of ['What is the leave policy?', 'Summarise the travel rules in three bullet points', 'Who approves expenses above 500 euros?'])
    await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: q });
  await atrium.api('POST', '/api/v1/users', { name: 'Robin Member', email: 'robin@example.test', role: 'member' });
  await atrium.api('POST', '/api/v1/users', { name: 'Sam Admin', email: 'sam@example.test', role: 'admin' });
  await signIn(page);
  await page.goto('/documents/new');
  await page.getByLabel('Title').fill('Employee handbook');
  await page.getByLabel('Description').fill('Leave, travel and expenses');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByRole('heading', { name: 'Employee handbook' })).toBeVisible();
  const docUrl = page.url();
  await page.getByLabel('Files to upload').setInputFiles([
    { name: 'leave-policy.md', mimeType: 'text/markdown', buffer: Buffer.from('# Leave\n\nEmployees get twenty-eight days of paid leave each year.\n\n# Sick leave\n\nTell your lead before 10:00.\n') },
    { name: 'setup.exe', mimeType: 'application/octet-stream', buffer: Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 0xff, 0xfe]) },
  ]);
  await expect(page.getByRole('listitem', { name: 'Upload of setup.exe' }).getByRole('alert')).toBeVisible();
  const hasUsage = (await page.evaluate(async () => (await fetch('/api/v1/me/usage')).status)) === 200;

  const screens: Array<[string, string, (() => Promise<void>)?]> = [
    ['documents', '/documents'],
    ['document', docUrl, async () => {
      await page.getByLabel('Files to upload').setInputFiles([{ name: 'broken.exe', mimeType: 'application/octet-stream', buffer: Buffer.from([0x4d, 0x5a, 0, 1]) }]);
      await expect(page.getByRole('alert').first()).toBeVisible();
      await page.getByRole('button', { name: 'Show chunks of leave-policy.md' }).click();
      await page.getByRole('textbox', { name: 'Question' }).fill('How many days of leave?');
      await page.getByRole('button', { name: 'Show context' }).click();
      await expect(page.getByLabel('Context for the question')).toBeVisible();
    }],
    ['models', '/models', async () => {
      await page.getByRole('button', { name: 'Test connection of Echo (stand-in)' }).click();
      await page.getByRole('button', { name: 'Test connection', exact: true }).click();
      await expect(page.getByRole('status').filter({ hasText: 'Connected' })).toBeVisible();
    }],
    ['model-form', `/models/${model.id}/edit`],
    ['logs', '/logs', async () => {
      await page.getByRole('button', { name: /Show the full prompt/ }).first().click();
    }],
    ...(hasUsage ? ([['usage', '/usage']] as Array<[string, string]>) : []),
    ['team', '/team'],
    ['account', '/account'],
  ];
  for (const scheme of ['light', 'dark'] as const) {
    for (const [width, height, label] of [[1280, 800, 'desktop'], [375, 812, 'phone']] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height });
      for (const [name, url, act] of screens) {
        await page.goto(url);
        await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
        await page.waitForLoadState('networkidle');
        if (act) await act();
        // the app scrolls inside .screen; let the page grow so the shot holds the whole screen
        await page.addStyleTag({ content: '.shell { height: auto !important; } .screen { overflow: visible !important; }' });
        await page.screenshot({ path: path.join(dir!, `${name}-${label}-${scheme}.png`), fullPage: true });
      }
    }
  }
});
