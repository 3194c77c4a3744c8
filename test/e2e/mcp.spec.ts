/**
 * MCP servers in a real browser: an owner adds a server (a small MCP server on loopback), tests it
 * and sees its tools, gives a workspace its tools in the workspace form, and a chat turn shows the
 * tool call collapsed (name, arguments, result, time), also after a reload. The screen passes the
 * same checks as every screen at desktop and phone width.
 */
import { everyView } from './checks.js';
import { createStandInModel } from './server.js';
import { expect, signIn, test } from './fixtures.js';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server.js';

let tools: McpTestServer;
test.beforeAll(async () => {
  tools = await startMcpTestServer();
});
test.afterAll(async () => {
  await tools?.close();
});

test('add and test an MCP server, give a workspace its tools, see a tool call in the chat', async ({ page, atrium }) => {
  const model = await createStandInModel(atrium, `Tools ${Date.now()}`);
  const ws = await atrium.api<{ id: string }>('POST', '/api/v1/workspaces', { name: 'With tools', modelIds: [model.id] });
  await signIn(page);

  await page.goto('/mcp-servers');
  await expect(page.getByRole('heading', { level: 1, name: 'MCP servers' })).toBeVisible();
  const add = page.getByRole('form', { name: 'Add an MCP server' });
  await add.getByLabel('Name').fill('Test tools');
  await add.getByLabel('URL').fill(tools.url);
  await add.getByLabel('Headers').fill('X-Api-Key: secret-123');
  await add.getByRole('button', { name: 'Add server' }).click();
  const list = page.getByRole('list', { name: 'MCP servers' });
  await expect(list).toContainText('Test tools');
  await expect(list).toContainText('headers: X-Api-Key');
  await expect(list).not.toContainText('secret-123');
  await page.getByRole('button', { name: 'Test Test tools' }).click();
  await expect(page.getByRole('list', { name: 'Tools of Test tools' })).toContainText('wait');
  await everyView(page, 'mcp-servers');

  await page.goto(`/workspaces/${ws.id}/edit`);
  await page.getByRole('checkbox', { name: 'Test tools' }).check();
  await page.getByLabel('Only these tools').fill('wait');
  await page.getByRole('button', { name: 'Save workspace' }).click();
  await expect(page).toHaveURL(new RegExp(`/w/${ws.id}$`));

  atrium.standIn.set({ toolCalls: [{ name: 'wait', arguments: { ms: 5 } }] });
  await page.getByRole('textbox', { name: 'Message' }).fill('Wait a moment, please');
  await page.getByRole('button', { name: 'Send' }).click();
  const answer = page.getByRole('article', { name: 'Answer' });
  await expect(answer).toContainText('Tool said: waited 5');
  const call = answer.locator('details.tool-call');
  await expect(call).toHaveCount(1);
  await expect(call.locator('summary')).toContainText('wait');
  await expect(call.locator('summary')).toContainText(/done · \d+ ms/);
  await call.locator('summary').click();
  await expect(call).toContainText('"ms": 5');
  await expect(call).toContainText('waited 5');

  await page.reload();
  const stored = page.getByRole('article', { name: 'Answer' }).locator('details.tool-call');
  await expect(stored.locator('summary')).toContainText('wait');
  await stored.locator('summary').click();
  await expect(stored).toContainText('waited 5');
  await everyView(page, 'chat-with-tools');
});
