/**
 * The admin screens in German, with data on them: documents (the list, one set with its files,
 * a rejected upload, its chunks, a question's context and the evaluation set after a run), models
 * with a connection test and the model form, MCP servers with their tools, prompt logs, usage with
 * budgets, the team (users, an invite link, retention, SCIM), the audit log, and the account (API
 * keys, saved prompts, preferences). Each passes the screen checks at desktop and phone width in
 * light and dark: German's longer words must fit too. With E2E_SHOTS=<dir> each is saved as a PNG.
 */
import type { Page } from '@playwright/test';
import { everyView } from './checks.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createStandInModel } from './server.js';
import { expect, test } from './fixtures.js';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server.js';

// checks.ts adds a style tag to take whole-page shots, which the Content-Security-Policy refuses
test.use({ bypassCSP: !!process.env.E2E_SHOTS, locale: 'de-DE' });

let tools: McpTestServer;
test.beforeAll(async () => {
  tools = await startMcpTestServer();
});
test.afterAll(async () => {
  await tools?.close();
});

const HANDBOOK = [
  '# Mitarbeiterhandbuch',
  '',
  '## Urlaub',
  '',
  'Jede Mitarbeiterin und jeder Mitarbeiter bekommt achtundzwanzig Tage bezahlten Urlaub im Jahr. Anträge gehen an die Teamleitung.',
  '',
  '## Parken',
  '',
  'Die Tiefgarage liegt hinter dem Gebäude; das Tor öffnet sich mit dem Dienstausweis.',
  '',
].join('\n');

async function signInGerman(page: Page): Promise<void> {
  await page.goto('/');
  await page.getByLabel('E-Mail-Adresse').fill(ADMIN_EMAIL);
  await page.getByLabel('Passwort').fill(ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Anmelden' }).click();
  await expect(page.getByRole('heading', { name: 'Arbeitsbereiche' })).toBeVisible();
}

/** A JSON call with the page's session. */
async function call<T>(page: Page, method: string, url: string, body?: unknown): Promise<T> {
  return page.evaluate(
    async ([m, u, b]) => {
      const res = await fetch(u as string, {
        method: m as string,
        ...(b === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) }),
      });
      if (!res.ok) throw new Error(`${m} ${u}: ${res.status} ${await res.text()}`);
      return res.status === 204 ? null : res.json();
    },
    [method, url, body] as const,
  ) as Promise<T>;
}

test('the admin screens in German fit and pass the checks, with data on them', async ({ page, atrium }) => {
  test.setTimeout(600_000);
  const stamp = Date.now();
  const model = await createStandInModel(atrium, `Echo ${stamp}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'Personalabteilung', modelIds: [model.id] });
  await atrium.api('POST', `/api/v1/chat/${ws.id}/completions`, { prompt: 'Wie viele Urlaubstage bekomme ich im Jahr?' });
  const email = `mia-${stamp}@example.test`;
  const mia = await atrium.api<{ user: { id: number } }>('POST', '/api/v1/users', {
    name: 'Mia Mitglied',
    email,
    role: 'member',
    password: 'mia password 12345',
  });
  await atrium.api('POST', '/api/v1/budgets', { scope: 'user', scopeId: mia.user.id, period: 'month', credits: 5000, requestsPerMinute: 30 });
  const me = await atrium.api<{ team: { id: string } }>('GET', '/api/v1/me');
  await atrium.api('POST', '/api/v1/budgets', { scope: 'team', scopeId: me.team.id, period: 'day', credits: 100000 });

  await signInGerman(page);
  const plusId = await page.evaluate(async (text) => {
    const form = new FormData();
    form.append('title', 'Mitarbeiterhandbuch');
    form.append('description', 'Urlaub, Reisen und Spesen');
    form.append('isPublic', 'true');
    const made = (await (await fetch('/api/v1/plus', { method: 'POST', body: form })).json()) as { id: string };
    const files = new FormData();
    files.append('files', new File([text], 'urlaubsregelung-und-parkplatzordnung.md', { type: 'text/markdown' }));
    const res = await fetch(`/api/v1/plus/${made.id}/add-file`, { method: 'POST', body: files });
    if (!res.ok) throw new Error(`add-file ${res.status}`);
    return made.id;
  }, HANDBOOK);
  await call(page, 'PUT', `/api/v1/plus/${plusId}/evaluation`, {
    questions: [
      { question: 'Wie viele Urlaubstage bekomme ich?', passage: 'achtundzwanzig Tage bezahlten Urlaub' },
      { question: 'Wo kann ich parken?', passage: 'Die Tiefgarage liegt hinter dem Gebäude' },
      { question: 'Wo ist das Fitnessstudio?', passage: 'Das Fitnessstudio ist auf dem Dach.' },
    ],
  });
  await call(page, 'POST', `/api/v1/plus/${plusId}/evaluation/run`);
  await call(page, 'POST', '/api/v1/prompts', { title: 'Übersetzen', content: 'Übersetzen Sie {{text}} ins {{sprache}}.', scope: 'team' });
  await call(page, 'POST', '/api/v1/prompts', { title: 'Zusammenfassung', content: 'Fassen Sie diesen Text in drei Sätzen zusammen.' });

  // documents
  await page.goto('/documents');
  await expect(page.getByRole('link', { name: /Mitarbeiterhandbuch/ })).toBeVisible();
  await everyView(page, 'de-documents');

  await page.goto(`/documents/${plusId}`);
  await expect(page.getByRole('heading', { level: 1, name: 'Mitarbeiterhandbuch' })).toBeVisible();
  await page
    .getByLabel('Hochzuladende Dateien')
    .setInputFiles([
      { name: 'installationsprogramm.exe', mimeType: 'application/octet-stream', buffer: Buffer.from([0x4d, 0x5a, 0x90, 0, 3, 0, 0, 0, 0xff, 0xfe]) },
    ]);
  await expect(page.getByRole('listitem', { name: 'Hochladen von installationsprogramm.exe' }).getByRole('alert')).toBeVisible();
  await page.getByRole('button', { name: /^Abschnitte von .* anzeigen$/ }).click();
  await page.getByRole('textbox', { name: 'Frage' }).fill('Wie viele Tage bezahlten Urlaub?');
  await page.getByRole('button', { name: 'Kontext anzeigen' }).click();
  await expect(page.getByLabel('Kontext für die Frage')).toContainText('achtundzwanzig');
  await expect(page.getByRole('region', { name: 'Testfragen' }).getByLabel('Letzte Ausführung')).toBeVisible();
  await everyView(page, 'de-document');

  // models
  await page.goto('/models');
  await page.getByRole('button', { name: `Verbindung von ${model.name} testen` }).click();
  await page.getByRole('button', { name: 'Verbindung testen', exact: true }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Verbunden' })).toBeVisible();
  await everyView(page, 'de-models');
  await page.goto(`/models/${model.id}/edit`);
  await expect(page.getByRole('heading', { level: 1, name: `${model.name} bearbeiten` })).toBeVisible();
  await everyView(page, 'de-model-form');

  // MCP servers
  await call(page, 'POST', '/api/v1/mcp-servers', { name: 'Werkzeugkasten', url: tools.url, headers: { 'X-Api-Key': 'geheim-123' } });
  await page.goto('/mcp-servers');
  await page.getByRole('button', { name: 'Werkzeugkasten testen' }).click();
  await expect(page.getByRole('list', { name: 'Werkzeuge von Werkzeugkasten' })).toBeVisible();
  await everyView(page, 'de-mcp');

  // prompt logs
  await page.goto('/logs');
  await page
    .getByRole('button', { name: /Ganzen Prompt und ganze Antwort anzeigen/ })
    .first()
    .click();
  await expect(page.getByRole('button', { name: /ausblenden/ }).first()).toBeVisible();
  await everyView(page, 'de-logs');

  // usage and budgets
  await page.goto('/usage');
  await expect(page.getByRole('table', { name: 'Budgets' })).toContainText('Mia Mitglied');
  await page
    .getByRole('button', { name: /^Budget .* bearbeiten$/ })
    .first()
    .click();
  await everyView(page, 'de-usage');

  // team
  await page.goto('/team');
  await expect(page.getByRole('list', { name: 'Benutzer' })).toContainText('Mia Mitglied');
  await page.getByLabel('Name', { exact: true }).fill('Robin Neumann');
  await page.getByLabel('E-Mail-Adresse', { exact: true }).fill(`robin-${stamp}@example.test`);
  await page.getByRole('button', { name: 'Einladen' }).click();
  await expect(page.getByRole('status', { name: 'Einladung für Robin Neumann' })).toBeVisible();
  await page.getByRole('button', { name: 'SCIM-Token erstellen' }).click();
  await expect(page.getByRole('status', { name: 'SCIM-Token' })).toBeVisible();
  await everyView(page, 'de-team');

  // audit log
  await page.goto('/audit');
  await expect(page.getByRole('table', { name: 'Audit-Protokoll' })).toContainText('auth.login');
  await everyView(page, 'de-audit');

  // account: API keys, saved prompts, preferences
  await page.goto('/account');
  await page.getByLabel('Name des Schlüssels').fill('Skript auf dem Laptop');
  await page.getByRole('button', { name: 'Schlüssel erstellen' }).click();
  await expect(page.getByRole('status', { name: 'Neuer API-Schlüssel' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Gespeicherte Prompts' })).toContainText('Übersetzen');
  await everyView(page, 'de-account-admin');
});
