/**
 * Every screen of the app, as an owner and as a member, at desktop (1280×800) and phone (390×844)
 * width in light and dark: each fits the window, passes axe-core's WCAG 2.1 A/AA rules (every
 * control named, readable contrast …) and follows the system theme; a member's screens hold no
 * control they cannot use. With E2E_SHOTS=<dir> each screen is also saved as a whole-page
 * PNG for a person to look at.
 */
import path from 'node:path';
import type { Page } from '@playwright/test';
import { checkScreen } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, signInAs, test } from './fixtures.js';

const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const SCHEMES = ['light', 'dark'] as const;
const shots = process.env.E2E_SHOTS;

/** Names of the controls only owners/admins (or a set's creator) have. */
const ADMIN_CONTROL =
  /^(New model|New system model|Edit\b|Test connection|Add .+ to the team|Remove\b|Invite\b|Create team|Add budget|Delete\b|Files to upload)/;

interface Screen {
  name: string;
  url: string;
  /** what to wait for (and do) once there */
  ready: (page: Page) => Promise<void>;
}

const h1 = (text: string | RegExp) => async (page: Page) => {
  await expect(page.getByRole('heading', { level: 1, name: text })).toBeVisible();
};

test('every screen, owner and member, desktop and phone, light and dark: fits, passes axe, no admin control for a member', async ({ page, atrium }) => {
  // 36 screens × axe, on a machine that may be shared: generous, never a measure of speed
  test.setTimeout(1_500_000);
  const stamp = Date.now();
  const model = await createStandInModel(atrium, `Echo ${stamp}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', {
    name: 'Handbook',
    sharingType: 'TEAM',
    modelIds: [model.id],
    greeting: 'Hello! Ask me about the handbook.',
    samplePrompts: ['Summarise the leave policy', 'Who approves expenses?'],
  });
  atrium.standIn.set({
    reply: 'Employees get **twenty-eight days** of paid leave:\n\n```ts\nconst days: number = 28;\n```\n\n| kind | days |\n|---|---|\n| paid | 28 |',
  });
  const turn = await atrium.api<{ threadId: string }>('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'How many days of paid leave do I get?' });
  atrium.standIn.reset();
  await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'Who approves expenses above 500 euros?' });
  const email = `mia-${stamp}@example.test`;
  const password = 'mia password 12345';
  const mia = await atrium.api<{ user: { id: number }; apiKey: string }>('POST', '/api/v1/users', { name: 'Mia Member', email, role: 'member', password });
  await atrium.api('POST', '/api/v1/budgets', { scope: 'user', scopeId: mia.user.id, period: 'month', credits: 5000, requestsPerMinute: 30 });

  // a public document set with one file, made through the API from the owner's session
  await signIn(page);
  const plusId = await page.evaluate(async (text) => {
    const form = new FormData();
    form.append('title', 'Employee handbook');
    form.append('description', 'Leave, travel and expenses');
    form.append('isPublic', 'true');
    const made = (await (await fetch('/api/v1/plus', { method: 'POST', body: form })).json()) as { id: string };
    const files = new FormData();
    files.append('files', new File([text], 'leave-policy.md', { type: 'text/markdown' }));
    const res = await fetch(`/api/v1/plus/${made.id}/add-file`, { method: 'POST', body: files });
    if (!res.ok) throw new Error(`add-file ${res.status}`);
    return made.id;
  }, '# Leave\n\nEmployees get twenty-eight days of paid leave each year. Requests go to the team lead.\n\n# Sick leave\n\nTell your lead before 10:00.\n');

  const owner: Screen[] = [
    { name: 'workspaces', url: '/', ready: h1('Workspaces') },
    {
      name: 'chat',
      url: `/w/${ws.id}/t/${turn.threadId}`,
      ready: async (p) => void (await expect(p.getByRole('article', { name: 'Answer' }).first()).toContainText('twenty-eight days')),
    },
    { name: 'documents', url: '/documents', ready: h1('Documents') },
    {
      name: 'document',
      url: `/documents/${plusId}`,
      ready: async (p) => {
        await h1('Employee handbook')(p);
        await p
          .getByLabel('Files to upload')
          .setInputFiles([{ name: 'setup.exe', mimeType: 'application/octet-stream', buffer: Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 0xff, 0xfe]) }]);
        await expect(p.getByRole('listitem', { name: 'Upload of setup.exe' }).getByRole('alert')).toBeVisible();
        await p.getByRole('button', { name: 'Show chunks of leave-policy.md' }).click();
        await expect(p.getByRole('list', { name: 'Chunks of leave-policy.md' })).toBeVisible();
      },
    },
    {
      name: 'document-question',
      url: `/documents/${plusId}`,
      ready: async (p) => {
        await p.getByRole('textbox', { name: 'Question' }).fill('How many days of paid leave?');
        await p.getByRole('button', { name: 'Show context' }).click();
        await expect(p.getByLabel('Context for the question')).toContainText('twenty-eight days');
      },
    },
    {
      name: 'models',
      url: '/models',
      ready: async (p) => {
        await p.getByRole('button', { name: `Test connection of ${model.name}` }).click();
        await p.getByRole('button', { name: 'Test connection', exact: true }).click();
        await expect(p.getByRole('status').filter({ hasText: 'Connected' })).toBeVisible();
      },
    },
    { name: 'model-form', url: `/models/${model.id}/edit`, ready: h1(`Edit ${model.name}`) },
    {
      name: 'logs',
      url: '/logs',
      ready: async (p) => {
        await p
          .getByRole('button', { name: /Show the full prompt/ })
          .first()
          .click();
        await expect(p.getByRole('button', { name: /Hide the full prompt/ })).toBeVisible();
      },
    },
    { name: 'usage', url: '/usage', ready: async (p) => void (await expect(p.getByRole('table', { name: 'Budgets' })).toContainText('Mia Member')) },
    { name: 'team', url: '/team', ready: async (p) => void (await expect(p.getByRole('list', { name: 'Users' })).toContainText('Mia Member')) },
    { name: 'audit', url: '/audit', ready: async (p) => void (await expect(p.getByRole('table', { name: 'Audit log' })).toContainText('auth.login')) },
    { name: 'account', url: '/account', ready: h1('My account') },
  ];
  const member: Screen[] = [
    { name: 'workspaces', url: '/', ready: async (p) => void (await expect(p.getByRole('list', { name: 'Workspaces' })).toContainText('Handbook')) },
    { name: 'chat', url: `/w/${ws.id}`, ready: async (p) => void (await expect(p.getByText('Hello! Ask me about the handbook.')).toBeVisible()) },
    { name: 'documents', url: '/documents', ready: async (p) => void (await expect(p.getByRole('link', { name: /Employee handbook/ })).toBeVisible()) },
    {
      name: 'document',
      url: `/documents/${plusId}`,
      ready: async (p) => void (await expect(p.getByRole('list', { name: 'Files' })).toContainText('leave-policy.md')),
    },
    { name: 'models', url: '/models', ready: async (p) => void (await expect(p.getByRole('list', { name: 'Team models' })).toContainText(model.name)) },
    { name: 'logs', url: '/logs', ready: async (p) => void (await expect(p.getByText('Your own calls.')).toBeVisible()) },
    {
      name: 'usage',
      url: '/usage',
      ready: async (p) => void (await expect(p.getByRole('table', { name: 'Budgets that apply to me' })).toContainText('5,000')),
    },
    { name: 'team', url: '/team', ready: async (p) => void (await expect(p.getByRole('alert')).toContainText('Only the team')) },
    { name: 'audit', url: '/audit', ready: async (p) => void (await expect(p.getByRole('alert')).toContainText('Only the team')) },
    { name: 'account', url: '/account', ready: h1('My account') },
  ];

  for (const scheme of SCHEMES) {
    for (const [size, viewport] of Object.entries(SIZES)) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize(viewport);
      await page.context().clearCookies();
      await page.goto('/');
      await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
      await visit(page, { name: 'signin', url: '/', ready: async () => {} }, `signin-${size}-${scheme}`, scheme, false);
      await signIn(page);
      for (const s of owner) await visit(page, s, `owner-${s.name}-${size}-${scheme}`, scheme, true);
      await page.context().clearCookies();
      await signInAs(page, email, password);
      for (const s of member) {
        await visit(page, s, `member-${s.name}-${size}-${scheme}`, scheme, true);
        for (const role of ['button', 'link', 'combobox'] as const) {
          const names = await page.getByRole(role, { name: ADMIN_CONTROL }).evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? e.textContent));
          expect(names, `member ${s.name}: ${role}s only owners/admins may use`).toEqual([]);
        }
        await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' })).toHaveCount(0);
      }
    }
  }
});

async function visit(page: Page, s: Screen, file: string, scheme: 'light' | 'dark', navigate: boolean): Promise<void> {
  if (navigate) await page.goto(s.url);
  await s.ready(page);
  await checkScreen(page, file, scheme);
  if (!shots) return;
  if (s.name === 'chat') return void (await page.screenshot({ path: path.join(shots, `${file}.png`) })); // a window-high layout
  // the app scrolls inside .screen; let the page grow so the shot holds the whole screen
  // (set through the CSSOM: the Content-Security-Policy refuses an injected <style>)
  const grow = (on: boolean) =>
    page.evaluate((grown) => {
      const set = (sel: string, prop: string, value: string) =>
        document.querySelectorAll<HTMLElement>(sel).forEach((el) => (grown ? el.style.setProperty(prop, value, 'important') : el.style.removeProperty(prop)));
      set('.shell', 'height', 'auto');
      set('.screen', 'overflow', 'visible');
    }, on);
  await grow(true);
  await page.screenshot({ path: path.join(shots, `${file}.png`), fullPage: true });
  await grow(false);
}
