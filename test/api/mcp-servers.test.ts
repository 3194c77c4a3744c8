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

async function create(key: string, payload: object) {
  return t.request({ method: 'POST', url: '/api/v1/mcp-servers', key, payload });
}

describe('MCP servers', () => {
  it('are created, listed, changed and deleted by an owner; headers are sealed and only their names answered', async () => {
    const team = await newTeam(t);
    const res = await create(team.ownerKey, { name: 'Everything', url: everything.url, headers: { Authorization: SECRET, 'X-Team': 'a' }, enabled: true });
    expect(res.statusCode, res.body).toBe(200);
    const created = expectShape(McpServer, res.json());
    expect(created).toMatchObject({ name: 'Everything', url: everything.url, enabled: true, headerNames: ['Authorization', 'X-Team'] });
    expect(res.body).not.toContain(SECRET);

    // At rest: sealed, not the value.
    const [row] = await t.database.db
      .select()
      .from(mcpServers)
      .where((await import('drizzle-orm')).eq(mcpServers.id, created.id));
    expect(row!.headersEnc).toMatch(/^v1:/);
    expect(row!.headersEnc).not.toContain('mcp-secret');

    const list = await t.request({ method: 'GET', url: '/api/v1/mcp-servers', key: team.ownerKey });
    expect(list.statusCode).toBe(200);
    expect(list.json().map((s: { id: string }) => s.id)).toEqual([created.id]);
    expect(list.body).not.toContain(SECRET);

    const patched = await t.request({
      method: 'PATCH',
      url: `/api/v1/mcp-servers/${created.id}`,
      key: team.ownerKey,
      payload: { name: 'Renamed', headers: null },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ name: 'Renamed', headerNames: [] });

    const del = await t.request({ method: 'DELETE', url: `/api/v1/mcp-servers/${created.id}`, key: team.ownerKey });
    expect(del.statusCode).toBe(200);
    expectProblem(await t.request({ method: 'GET', url: `/api/v1/mcp-servers/${created.id}`, key: team.ownerKey }), 404);
  });

  it('test connects and lists the tools of the reference server', async () => {
    const team = await newTeam(t);
    const s = (await create(team.ownerKey, { name: 'Everything', url: everything.url })).json();
    const res = await t.request({ method: 'POST', url: `/api/v1/mcp-servers/${s.id}/test`, key: team.ownerKey });
    expect(res.statusCode, res.body).toBe(200);
    const body = expectShape(McpServerTest, res.json());
    expect(body.ok).toBe(true);
    expect(body.error).toBeUndefined();
    const names = body.tools.map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(body.tools.find((x) => x.name === 'echo')!.description).toMatch(/echo/i);
  });

  it('test of a server that is not there is ok: false with why, not an error', async () => {
    const team = await newTeam(t);
    const s = (await create(team.ownerKey, { name: 'Gone', url: 'http://127.0.0.1:9/mcp' })).json();
    const res = await t.request({ method: 'POST', url: `/api/v1/mcp-servers/${s.id}/test`, key: team.ownerKey });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, tools: [] });
    expect(res.json().error).toEqual(expect.any(String));
  });

  it('sends the custom headers to the server', async () => {
    const team = await newTeam(t);
    const s = (await create(team.ownerKey, { name: 'Tools', url: tools.url, headers: { 'X-Api-Key': 'k-123' } })).json();
    tools.reset();
    const res = await t.request({ method: 'POST', url: `/api/v1/mcp-servers/${s.id}/test`, key: team.ownerKey });
    expect(res.json().ok).toBe(true);
    expect(res.json().tools.map((x: { name: string }) => x.name)).toEqual(['wait', 'big', 'boom']);
    expect(tools.lastHeaders['x-api-key']).toBe('k-123');
  });

  it('another team’s server answers 404 exactly like a missing one, for every route', async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const s = (await create(a.ownerKey, { name: 'A', url: everything.url })).json();
    const missing = randomUUID();
    for (const [method, suffix, payload] of [
      ['GET', '', undefined],
      ['PATCH', '', { name: 'x' }],
      ['DELETE', '', undefined],
      ['POST', '/test', undefined],
    ] as const) {
      const theirs = expectProblem(
        await t.request({ method, url: `/api/v1/mcp-servers/${s.id}${suffix}`, key: b.ownerKey, ...(payload ? { payload } : {}) }),
        404,
      );
      const none = expectProblem(
        await t.request({ method, url: `/api/v1/mcp-servers/${missing}${suffix}`, key: b.ownerKey, ...(payload ? { payload } : {}) }),
        404,
      );
      expect(theirs).toEqual({ ...none, instance: theirs.instance });
    }
    expect((await t.request({ method: 'GET', url: '/api/v1/mcp-servers', key: b.ownerKey })).json()).toEqual([]);
    // Still there for its team.
    expect((await t.request({ method: 'GET', url: `/api/v1/mcp-servers/${s.id}`, key: a.ownerKey })).statusCode).toBe(200);
  });

  it('members list them but may not change or test them', async () => {
    const team = await newTeam(t);
    const member = await team.addUser('member');
    const admin = await team.addUser('admin');
    expectProblem(await create(member.key, { name: 'M', url: everything.url }), 403);
    const s = (await create(admin.key, { name: 'A', url: everything.url })).json();
    expect((await t.request({ method: 'GET', url: '/api/v1/mcp-servers', key: member.key })).json()).toHaveLength(1);
    expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/mcp-servers/${s.id}`, key: member.key, payload: { enabled: false } }), 403);
    expectProblem(await t.request({ method: 'DELETE', url: `/api/v1/mcp-servers/${s.id}`, key: member.key }), 403);
    expectProblem(await t.request({ method: 'POST', url: `/api/v1/mcp-servers/${s.id}/test`, key: member.key }), 403);
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
    const s = (await create(team.ownerKey, { name: 'ok', url: everything.url })).json();
    const p = expectProblem(
      await t.request({ method: 'PATCH', url: `/api/v1/mcp-servers/${s.id}`, key: team.ownerKey, payload: { url: 'http://169.254.169.254/' } }),
      400,
    );
    expect(p.code).toBe('mcp_url_refused');
    const list = (await t.request({ method: 'GET', url: '/api/v1/mcp-servers', key: team.ownerKey })).json();
    expect(list).toHaveLength(1);
    expect(list[0].url).toBe(everything.url);
  });

  it('refuses private addresses under PROVIDER_URL_POLICY=public-only', async () => {
    const strict = await startTestApp({ providerUrlPolicy: 'public-only' });
    try {
      const team = await newTeam(strict);
      const res = await strict.request({ method: 'POST', url: '/api/v1/mcp-servers', key: team.ownerKey, payload: { name: 'x', url: everything.url } });
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
    const mine = (await create(a.ownerKey, { name: 'Mine', url: everything.url })).json();
    const theirs = (await create(b.ownerKey, { name: 'Theirs', url: everything.url })).json();
    const ws = await createWorkspace(t, a.ownerKey, { mcpServerIds: [mine.id], allowedTools: ['echo'] });
    expect(ws).toMatchObject({ mcpServerIds: [mine.id], allowedTools: ['echo'] });

    for (const id of [theirs.id, randomUUID()]) {
      const p = expectProblem(await t.request({ method: 'PATCH', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey, payload: { mcpServerIds: [id] } }), 400);
      expect(p.code).toBe('unknown_mcp_server');
    }
    const cleared = await t.request({ method: 'PATCH', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey, payload: { allowedTools: null } });
    expect(cleared.json()).toMatchObject({ mcpServerIds: [mine.id], allowedTools: null });

    // Deleting the server takes it out of the workspace.
    await t.request({ method: 'DELETE', url: `/api/v1/mcp-servers/${mine.id}`, key: a.ownerKey });
    const after = await t.request({ method: 'GET', url: `/api/v1/workspaces/${ws.id}`, key: a.ownerKey });
    expect(after.json().mcpServerIds).toEqual([]);
  });
});
