/** GET …/history/{threadId}/export: a thread as a Markdown or JSON download, for whoever may read it. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { expectShape } from '../helpers/shape.js';
import { ChatThreadExport } from '../../src/modules/chat/schema.js';
import { contained } from '../../src/modules/chat/export.js';
import { safeFilename } from '../../src/http/download.js';
import { useStandIn } from '../support/use-standin.js';

let t: TestApp;
const stand = useStandIn();

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

/** The export's answer as its bytes, with the fetch Response for status and headers. */
async function exported(key: string, workspaceId: string, threadId: string, format?: 'md' | 'json') {
  const { data, error, response } = await t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}/export', {
    params: { path: { workspaceId, threadId }, query: format ? { format } : {} },
    parseAs: 'arrayBuffer',
  });
  const raw = data ? Buffer.from(data) : Buffer.from(JSON.stringify(error ?? null));
  return { response, error, raw, text: raw.toString('utf8') };
}
const readThread = async (key: string, workspaceId: string, threadId: string, limit?: number) =>
  expectStatus(
    await t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId }, query: limit ? { limit } : {} } }),
    200,
  );

async function setup(ws: Record<string, unknown> = {}, team?: TeamFixture) {
  team ??= await newTeam(t);
  const model = await createModel(t, team.ownerKey, { name: 'Stand-in GPT', url: stand.standIn.openaiBaseUrl, contextWindow: 16000 });
  const w = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], ...ws });
  return { team, model, ws: w };
}

async function turn(
  key: string,
  wsId: string,
  body: { prompt?: string; threadId?: string; plusIds?: string[]; messages?: Array<{ role: 'user'; content: string }> },
) {
  return t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: wsId } }, body });
}

/** A thread of three turns: one answered with sources, one whose reply has Markdown that leaves a code fence open, one failed. */
async function richThread() {
  const { team, model, ws } = await setup();
  const form = multipartBody([
    { name: 'title', value: 'GPL' },
    { name: 'files', filename: 'gpl-3.txt', contentType: 'text/plain', data: readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'gpl-3.txt')) },
  ]);
  const plus = expectStatus(await t.api(team.ownerKey).POST('/api/v1/plus', form), 200);
  const first = expectStatus(
    await turn(team.ownerKey, ws.id, { prompt: 'What must I do when I modify the program and distribute it?', plusIds: [plus.id] }),
    200,
  );
  expect(first.sources.length).toBeGreaterThan(0);
  const threadId = first.threadId;
  stand.standIn.set({ reply: 'Here is code:\n\n```js\nconst a = 1;\n\n## Not a heading of the export' });
  expect((await turn(team.ownerKey, ws.id, { prompt: 'Show me *some* code', threadId })).response.status).toBe(200);
  stand.standIn.set({ reply: null, failStatus: 500 });
  expectProblem(await turn(team.ownerKey, ws.id, { prompt: 'this one fails', threadId }), 502);
  stand.standIn.reset();
  return { team, model, ws, threadId, sources: first.sources };
}

describe('thread export', () => {
  it('answers JSON with the metadata and every message in order: roles, models, sources, the failed turn', async () => {
    const { team, model, ws, threadId, sources } = await richThread();
    const res = await exported(team.ownerKey, ws.id, threadId, 'json');
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.response.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.json"; filename\*=UTF-8''.+\.json$/);
    const body = expectShape(ChatThreadExport, JSON.parse(res.text));
    const thread = await readThread(team.ownerKey, ws.id, threadId);
    expect(body).toMatchObject({ id: threadId, workspaceId: ws.id, title: thread.title, created: thread.created, updated: thread.updated });
    expect(body.messages.map((m) => [m.role, m.status])).toEqual([
      ['user', 'ok'],
      ['assistant', 'ok'],
      ['user', 'ok'],
      ['assistant', 'ok'],
      ['user', 'ok'],
      ['assistant', 'error'],
    ]);
    expect(body.messages.map((m) => m.id)).toEqual(thread.messages.map((m) => m.id));
    expect(body.messages.map((m) => m.content)).toEqual(thread.messages.map((m) => m.content));
    expect(body.messages[1]).toMatchObject({ modelId: model.id, modelName: 'Stand-in GPT' });
    expect(body.messages[0]).toMatchObject({ modelId: null, modelName: null, error: null, sources: [] });
    expect(body.messages[1]!.sources.map((s) => [s.filename, s.excerpt])).toEqual(sources.map((s) => [s.filename, s.excerpt]));
    expect(body.messages[5]!.error).toMatchObject({ status: 502, code: 'provider_error' });
  });

  it('answers Markdown (the default format): title, each turn with who and which model, sources, the failed turn marked, text verbatim', async () => {
    const { team, ws, threadId, sources } = await richThread();
    const res = await exported(team.ownerKey, ws.id, threadId);
    expect(res.response.status).toBe(200);
    expect(res.response.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(res.response.headers.get('content-disposition')).toMatch(/\.md"; filename\*=UTF-8''.+\.md$/);
    const md = res.text;
    expect(md.startsWith('# What must I do when I modify the program')).toBe(true);
    expect(md.match(/^## User$/gm)).toHaveLength(3);
    expect(md.match(/^## Assistant · Stand-in GPT$/gm)).toHaveLength(3);
    expect(md).toContain('\nShow me *some* code\n');
    expect(md).toContain('**Sources**\n\n1. **gpl-3.txt**: ');
    expect(md).toContain(`**gpl-3.txt**: ${sources[0]!.excerpt.replace(/\s+/g, ' ').trim()}`);
    expect(md).toMatch(/^> \*\*Failed:\*\* .+ \(502 provider_error\)$/m);
    // the reply's open code fence is closed before the next turn, which stays a heading
    expect(md).toContain('```js\nconst a = 1;\n\n## Not a heading of the export\n```\n');
    const order = ['What must I do', 'Show me *some* code', 'this one fails'].map((s) => md.indexOf(s));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order[0]).toBeGreaterThan(0);
    expect(Buffer.from(md, 'utf8').equals(res.raw)).toBe(true);
  });

  it('exports every message of a thread longer than a history page and than one read of the export', async () => {
    const { team, ws } = await setup();
    const first = expectStatus(await turn(team.ownerKey, ws.id, { prompt: 'message 0' }), 200);
    // 1,002 messages: the turn above, then two turns of 499 questions each (a request holds at most 500), each answered
    for (let i = 0; i < 2; i++) {
      const messages = Array.from({ length: 499 }, (_, k) => ({ role: 'user' as const, content: `message ${1 + i * 499 + k}` }));
      expect((await turn(team.ownerKey, ws.id, { threadId: first.threadId, messages })).response.status).toBe(200);
    }
    const thread = await readThread(team.ownerKey, ws.id, first.threadId, 1);
    expect(thread.hasEarlier).toBe(true);
    const body = expectShape(ChatThreadExport, JSON.parse((await exported(team.ownerKey, ws.id, first.threadId, 'json')).text));
    expect(body.messages).toHaveLength(thread.messageCount);
    expect(body.messages).toHaveLength(1002);
    const users = body.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(users.slice(0, 3)).toEqual(['message 0', 'message 1', 'message 2']);
    const md = (await exported(team.ownerKey, ws.id, first.threadId, 'md')).text;
    expect(md.match(/^## (User|Assistant)/gm)).toHaveLength(thread.messageCount);
    expect(md).toContain('\nmessage 0\n');
    expect(md).toContain(`\n${users.at(-1)!}\n`);
  });
});

describe('thread export headers and refusals', () => {
  it('names the file after the title, safe for every OS and for the header, with the exact title in filename*', async () => {
    const { team, ws } = await setup();
    const threadId = expectStatus(await turn(team.ownerKey, ws.id, { prompt: 'hi' }), 200).threadId;
    const hostile = '"Über"\r\nSet-Cookie: x=1 ../..\\etc/passwd: <a>|b?*% 日本語.';
    const renamed = await t.api(team.ownerKey).POST('/api/v1/chat/{workspaceId}/history/{threadId}', {
      params: { path: { workspaceId: ws.id, threadId } },
      body: { title: hostile },
    });
    expect(renamed.response.status).toBe(200);
    for (const [format, ext] of [
      ['md', 'md'],
      ['json', 'json'],
    ] as const) {
      const { response } = await exported(team.ownerKey, ws.id, threadId, format);
      expect(response.status).toBe(200);
      expect(response.headers.get('set-cookie')).toBeNull();
      const cd = String(response.headers.get('content-disposition'));
      expect(cd).toBe(
        `attachment; filename="_ber Set-Cookie x=1 .. .. etc passwd a b _ ___.${ext}"; ` +
          `filename*=UTF-8''%C3%9Cber%20Set-Cookie%20x%3D1%20..%20..%20etc%20passwd%20a%20b%20%25%20%E6%97%A5%E6%9C%AC%E8%AA%9E.${ext}`,
      );
      // filename* decodes to a name with no path separator, control or Windows-forbidden character
      const exact = decodeURIComponent(cd.split("filename*=UTF-8''")[1]!);
      expect(exact).toBe(`Über Set-Cookie x=1 .. .. etc passwd a b % 日本語.${ext}`);
      expect(exact).not.toMatch(/[\u0000-\u001f<>:"/\\|?*]/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    // the title inside the Markdown stays on its heading line
    const md = (await exported(team.ownerKey, ws.id, threadId)).text;
    expect(md.split('\n')[0]).toBe('# "Über" Set-Cookie: x=1 ../..\\etc/passwd: <a>|b?*% 日本語.');
  });

  it('refuses an unknown format with 400', async () => {
    const { team, ws } = await setup();
    const threadId = expectStatus(await turn(team.ownerKey, ws.id, { prompt: 'hi' }), 200).threadId;
    const url = `/api/v1/chat/${ws.id}/history/${threadId}/export`; // raw: formats the document does not have
    for (const q of ['?format=xml', '?format=', '?format=MD']) expectProblem(await t.request({ method: 'GET', url: url + q, key: team.ownerKey }), 400);
  });

  it('answers whoever may not read the thread exactly as it answers an unknown thread', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    // per-user history: another member of the team
    const perUser = await setup({ chatHistoryType: 'USER' });
    const member = await perUser.team.addUser('member');
    const mine = expectStatus(await turn(perUser.team.ownerKey, perUser.ws.id, { prompt: 'mine only' }), 200).threadId;
    // a private workspace of the owner: another member of the team
    const priv = await setup({ sharingType: 'PRIVATE' }, perUser.team);
    const privThread = expectStatus(await turn(perUser.team.ownerKey, priv.ws.id, { prompt: 'private' }), 200).threadId;
    // another team
    const stranger = await newTeam(t);
    const cases: Array<[string, string, string]> = [
      [member.key, perUser.ws.id, mine],
      [member.key, priv.ws.id, privThread],
      [stranger.ownerKey, perUser.ws.id, mine],
    ];
    for (const [key, wsId, threadId] of cases) {
      for (const format of [undefined, 'json'] as const) {
        const denied = await exported(key, wsId, threadId, format);
        const missing = await exported(key, wsId, unknown, format);
        expectProblem(denied, 404);
        expectProblem(missing, 404);
        expect(denied.text).toBe(missing.text);
        expect(denied.response.headers.get('content-disposition')).toBeNull();
      }
    }
    // the owner still reads both
    expect((await exported(perUser.team.ownerKey, perUser.ws.id, mine)).response.status).toBe(200);
    expect((await exported(perUser.team.ownerKey, priv.ws.id, privThread)).response.status).toBe(200);
  });
});

describe('export helpers', () => {
  it('safeFilename: reserved Windows names, dots, empty titles and long titles', () => {
    expect(safeFilename('CON', 'md', 'chat')).toBe('_CON.md');
    expect(safeFilename('lpt1.txt', 'md', 'chat')).toBe('_lpt1.txt.md');
    expect(safeFilename(' ..hidden. ', 'json', 'chat')).toBe('hidden.json');
    expect(safeFilename('\r\n/\\:*?"<>|', 'md', 'chat')).toBe('chat.md');
    const long = safeFilename('😀'.repeat(150), 'md', 'chat');
    expect(Array.from(long)).toHaveLength(103);
    expect(long.endsWith('😀.md')).toBe(true);
  });

  it('contained: closes an open fence (of its own kind and length) and an open HTML comment, leaves closed ones alone', () => {
    expect(contained('a\n````py\nx\n```\ny')).toBe('a\n````py\nx\n```\ny\n````');
    expect(contained('~~~\ncode')).toBe('~~~\ncode\n~~~');
    expect(contained('```\nx\n```')).toBe('```\nx\n```');
    expect(contained('text <!-- hidden')).toBe('text <!-- hidden -->');
    expect(contained('<!-- a --> b')).toBe('<!-- a --> b');
    expect(contained('inline ```code``` stays')).toBe('inline ```code``` stays');
  });
});
