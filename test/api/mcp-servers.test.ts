/**
 * MCP servers as a team resource: create, list, change, delete, test (against the reference
 * server from npm, started on loopback), who may do what, another team's server answering 404
 * like a missing one, the URL guard, and custom headers that are sent but never answered.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpServers } from '../../src/db/schema/mcp.js';
import { McpServer, McpServerTest } from '../../src/modules/mcp/schema.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createWorkspace } from '../helpers/factories.js';
import { expectStatus, type paths } from '../helpers/api.js';
import { expectShape } from '../helpers/shape.js';
import { startMcpTestServer, startServerEverything, type McpTestServer } from '../support/mcp-test-server.js';

let t: TestApp;
let everything: { url: string; close(): Promise<void> };
let tools: McpTestServer;

beforeAll(async () => {
  [t, everything, tools] = await Promise.all([startTestApp(), startServerEverything(), startMcpTestServer()]);
});
afterAll(async () => {
  await t?.close();
  await everything?.close();
  await tools?.close();
});

const SECRET = 'Bearer mcp-secret-value-0123456789';

type NewServer = paths['/api/v1/mcp-servers']['post']['requestBody']['content']['application/json'];
type ServerChange = paths['/api/v1/mcp-servers/{serverId}']['patch']['requestBody']['content']['application/json'];
const create = (key: string, body: NewServer) => t.api(key).POST('/api/v1/mcp-servers', { body });
const created = async (key: string, body: NewServer) => expectShape(McpServer, expectStatus(await create(key, body), 200));
const at = (serverId: string) => ({ params: { path: { serverId } } });
const get = (key: string, id: string) => t.api(key).GET('/api/v1/mcp-servers/{serverId}', at(id));
const patch = (key: string, id: string, body: ServerChange) => t.api(key).PATCH('/api/v1/mcp-servers/{serverId}', { ...at(id), body });
const remove = (key: string, id: string) => t.api(key).DELETE('/api/v1/mcp-servers/{serverId}', at(id));
const testServer = (key: string, id: string) => t.api(key).POST('/api/v1/mcp-servers/{serverId}/test', at(id));
const list = (key: string) => t.api(key).GET('/api/v1/mcp-servers');

describe('MCP servers', () => {
  it('are created, listed, changed and deleted by an owner; headers are sealed and only their names answered', async () => {
    const team = await newTeam(t);
    const created = await create(team.ownerKey, { name: 'Everything', url: everything.url, headers: { Authorization: SECRET, 'X-Team': 'a' }, enabled: true });
    const server = expectShape(McpServer, expectStatus(created, 200));
    expect(server).toMatchObject({ name: 'Everything', url: everything.url, enabled: true, headerNames: ['Authorization', 'X-Team'] });
    expect(JSON.stringify(server)).not.toContain(SECRET);

    // At rest: sealed, not the value.
    const [row] = await t.database.db
      .select()
      .from(mcpServers)
      .where((await import('drizzle-orm')).eq(mcpServers.id, server.id));
    expect(row!.headersEnc).toMatch(/^v1:/);
    expect(row!.headersEnc).not.toContain('mcp-secret');

    const all = expectStatus(await list(team.ownerKey), 200);
    expect(all.map((s) => s.id)).toEqual([server.id]);
    expect(JSON.stringify(all)).not.toContain(SECRET);

    const patched = expectStatus(await patch(team.ownerKey, server.id, { name: 'Renamed', headers: null }), 200);
    expect(patched).toMatchObject({ name: 'Renamed', headerNames: [] });

    expect((await remove(team.ownerKey, server.id)).response.status).toBe(200);
    expectProblem(await get(team.ownerKey, server.id), 404);
  });

  it('test connects and lists the tools of the reference server', async () => {
    const team = await newTeam(t);
    const s = await created(team.ownerKey, { name: 'Everything', url: everything.url });
    const body = expectShape(McpServerTest, expectStatus(await testServer(team.ownerKey, s.id), 200));
    expect(body.ok).toBe(true);
    expect(body.error).toBeUndefined();
    const names = body.tools.map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(body.tools.find((x) => x.name === 'echo')!.description).toMatch(/echo/i);
  });

  it('test of a server that is not there is ok: false with why, not an error', async () => {
    const team = await newTeam(t);
    const s = await created(team.ownerKey, { name: 'Gone', url: 'http://127.0.0.1:9/mcp' });
    const res = expectStatus(await testServer(team.ownerKey, s.id), 200);
    expect(res).toMatchObject({ ok: false, tools: [] });
    expect(res.error).toEqual(expect.any(String));
  });

  it('sends the custom headers to the server', async () => {
    const team = await newTeam(t);
    const s = await created(team.ownerKey, { name: 'Tools', url: tools.url, headers: { 'X-Api-Key': 'k-123' } });
    tools.reset();
    const res = (await testServer(team.ownerKey, s.id)).data!;
    expect(res.ok).toBe(true);
    expect(res.tools.map((x) => x.name)).toEqual(['wait', 'big', 'boom']);
    expect(tools.lastHeaders['x-api-key']).toBe('k-123');
  });

  it('another team’s server answers 404 exactly like a missing one, for every route', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const s = await created(a.ownerKey, { name: 'A', url: everything.url });
    const missing = randomUUID();
    for (const route of [
      (id: string) => get(b.ownerKey, id),
      (id: string) => patch(b.ownerKey, id, { name: 'x' }),
      (id: string) => remove(b.ownerKey, id),
      (id: string) => testServer(b.ownerKey, id),
    ]) {
      const theirs = expectProblem(await route(s.id), 404);
      const none = expectProblem(await route(missing), 404);
      expect(theirs).toEqual({ ...none, instance: theirs.instance });
    }
    expect((await list(b.ownerKey)).data).toEqual([]);
    // Still there for its team.
    expect((await get(a.ownerKey, s.id)).response.status).toBe(200);
  });

  it('members list them but may not change or test them', async () => {
    const team = await newTeam(t);
    const member = await team.addUser('member');
    const admin = await team.addUser('admin');
    expectProblem(await create(member.key, { name: 'M', url: everything.url }), 403);
    const s = await created(admin.key, { name: 'A', url: everything.url });
    expect((await list(member.key)).data).toHaveLength(1);
    expectProblem(await patch(member.key, s.id, { enabled: false }), 403);
    expectProblem(await remove(member.key, s.id), 403);
    expectProblem(await testServer(member.key, s.id), 403);
  });

  it('refuses metadata, link-local and non-http URLs, and bad headers, storing nothing', async () => {
    const team = await newTeam(t);
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.google.internal/mcp',
      'http://[fe80::1]/mcp',
      'file:///etc/passwd',
      'not a url',
    ]) {
      const p = expectProblem(await create(team.ownerKey, { name: 'x', url }), 400);
      expect(p.code).toBe('mcp_url_refused');
    }
    expectProblem(await create(team.ownerKey, { name: 'x', url: everything.url, headers: { 'Bad Name': 'v' } }), 400);
    expectProblem(await create(team.ownerKey, { name: 'x', url: everything.url, headers: { 'X-A': 'line\r\nInjected: 1' } }), 400);
    expectProblem(await create(team.ownerKey, { name: 'x', url: everything.url, headers: { 'X-A': '1', 'x-a': '2' } }), 400);
    const s = await created(team.ownerKey, { name: 'ok', url: everything.url });
    const p = expectProblem(await patch(team.ownerKey, s.id, { url: 'http://169.254.169.254/' }), 400);
    expect(p.code).toBe('mcp_url_refused');
    const all = expectStatus(await list(team.ownerKey), 200);
    expect(all).toHaveLength(1);
    expect(all[0]!.url).toBe(everything.url);
  });

  it('refuses private addresses under PROVIDER_URL_POLICY=public-only', async () => {
    const strict = await startTestApp({ providerUrlPolicy: 'public-only' });
    try {
      const team = await newTeam(strict);
      const res = await strict.api(team.ownerKey).POST('/api/v1/mcp-servers', { body: { name: 'x', url: everything.url } });
      expect(expectProblem(res, 400).code).toBe('mcp_url_refused');
    } finally {
      await strict.close();
    }
  });
});

describe('workspaces and MCP servers', () => {
  it('a workspace takes its team’s servers and an allow-list; another team’s server is refused like a missing one', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const mine = await created(a.ownerKey, { name: 'Mine', url: everything.url });
    const theirs = await created(b.ownerKey, { name: 'Theirs', url: everything.url });
    const ws = await createWorkspace(t, a.ownerKey, { mcpServerIds: [mine.id], allowedTools: ['echo'] });
    expect(ws).toMatchObject({ mcpServerIds: [mine.id], allowedTools: ['echo'] });

    const workspace = { params: { path: { workspaceId: ws.id } } };
    for (const id of [theirs.id, randomUUID()]) {
      const p = expectProblem(await t.api(a.ownerKey).PATCH('/api/v1/workspaces/{workspaceId}', { ...workspace, body: { mcpServerIds: [id] } }), 400);
      expect(p.code).toBe('unknown_mcp_server');
    }
    const cleared = await t.api(a.ownerKey).PATCH('/api/v1/workspaces/{workspaceId}', { ...workspace, body: { allowedTools: null } });
    expect(cleared.data).toMatchObject({ mcpServerIds: [mine.id], allowedTools: null });

    // Deleting the server takes it out of the workspace.
    await remove(a.ownerKey, mine.id);
    const after = await t.api(a.ownerKey).GET('/api/v1/workspaces/{workspaceId}', workspace);
    expect(after.data!.mcpServerIds).toEqual([]);
  });
});
