/** Sharing a thread by link: the snapshot, the public read, revocation, the team setting, and who may. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, multipartBody, type paths } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { ChatShare, SharedThread } from '../../src/modules/chat/schema.js';
import { useStandIn } from '../support/use-standin.js';

const provider = useStandIn();
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function setup(ws: Record<string, unknown> = {}, team?: TeamFixture) {
  team ??= await newTeam(t);
  const model = await createModel(t, team.ownerKey, { name: 'Stand-in GPT', url: provider.standIn.openaiBaseUrl, contextWindow: 16000 });
  const w = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], ...ws });
  return { team, ws: w };
}

type Completion = paths['/api/v1/chat/{workspaceId}/completions']['post']['requestBody']['content']['application/json'];
async function turn(key: string, workspaceId: string, body: Completion) {
  return expectStatus(await t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId } }, body }), 200);
}

const thread$ = (workspaceId: string, threadId: string) => ({ params: { path: { workspaceId, threadId } } });
const share = (key: string, wsId: string, threadId: string) => t.api(key).POST('/api/v1/chat/{workspaceId}/history/{threadId}/share', thread$(wsId, threadId));
const getShare = (key: string, wsId: string, threadId: string) =>
  t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}/share', thread$(wsId, threadId));
const revoke = (key: string, wsId: string, threadId: string) =>
  t.api(key).DELETE('/api/v1/chat/{workspaceId}/history/{threadId}/share', thread$(wsId, threadId));
/** What anyone with the link reads: no key, no cookie (openapi-fetch encodes the token). */
const open = (token: string, app: TestApp = t) => app.api().GET('/api/v1/share/{token}', { params: { path: { token } } });
const setting = (key: string, enabled: boolean, app: TestApp = t) => app.api(key).PUT('/api/v1/chat/sharing', { body: { enabled } });

async function entry(key: string, isPublic: boolean) {
  const form = multipartBody([
    { name: 'title', value: isPublic ? 'Public GPL' : 'Private GPL' },
    { name: 'isPublic', value: String(isPublic) },
    {
      name: 'files',
      filename: isPublic ? 'public-gpl.txt' : 'private-gpl.txt',
      contentType: 'text/plain',
      data: readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'gpl-3.txt')),
    },
  ]);
  const made = expectStatus(await t.api(key).POST('/api/v1/plus', form), 200);
  expect(made.isPublic).toBe(isPublic);
  return made.id;
}

describe('sharing a thread', () => {
  it('shows the thread as it was when shared, signed out; sharing again moves it under the same link; revoking kills it at once', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    const a = await turn(k, ws.id, { prompt: 'first question' });
    const s = expectShape(ChatShare, expectStatus(await share(k, ws.id, a.threadId), 200));
    expect(s.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.url).toMatch(new RegExp(`^https?://[^/]+/share/${s.token}$`));
    // later turns and versions are not in the share
    await turn(k, ws.id, { prompt: 'second question', threadId: a.threadId });
    provider.standIn.set({ reply: 'regenerated' });
    await turn(k, ws.id, { regenerate: a.messageId });
    const seen = await open(s.token);
    expect(seen.response.status).toBe(200);
    expect(seen.response.headers.get('cache-control')).toBe('no-store');
    const body = expectShape(SharedThread, seen.data);
    expect(body.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'first question'],
      ['assistant', 'Echo: first question'],
    ]);
    expect(body.messages[1]!.modelName).toBe('Stand-in GPT');
    // the page itself is served signed out (the app's index, or the "not built" page), 404 once revoked
    // raw: the share page is a web page, not in the document
    const page = await t.request({ method: 'GET', url: `/share/${s.token}` });
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    // the sharer sees the link again; sharing again keeps it and moves the snapshot to the thread as it reads now
    const got = await getShare(k, ws.id, a.threadId);
    expect(got.data).toEqual(s);
    const again = expectShape(ChatShare, (await share(k, ws.id, a.threadId)).data);
    expect(again.token).toBe(s.token);
    expect(expectStatus(await open(s.token), 200).messages.map((m) => m.content)).toEqual(['first question', 'regenerated']);
    // revoked: 404 at once, the page too
    const del = await revoke(k, ws.id, a.threadId);
    expect(del.response.status).toBe(200);
    expectProblem(await open(s.token), 404);
    expect((await t.request({ method: 'GET', url: `/share/${s.token}` })).statusCode).toBe(404); // raw: the share page
    expectProblem(await getShare(k, ws.id, a.threadId), 404);
    expectProblem(await revoke(k, ws.id, a.threadId), 404);
    // a new share is a new link: the old one stays dead
    const fresh = expectShape(ChatShare, (await share(k, ws.id, a.threadId)).data);
    expect(fresh.token).not.toBe(s.token);
    expectProblem(await open(s.token), 404);
  });

  it('answers 404 for an unknown or malformed token and for a deleted thread', async () => {
    const { team, ws } = await setup();
    expectProblem(await open('A'.repeat(43)), 404);
    expectProblem(await open('not a token'), 404);
    expect((await t.request({ method: 'GET', url: '/share/nope' })).statusCode).toBe(404); // raw: the share page
    const a = await turn(team.ownerKey, ws.id, { prompt: 'gone soon' });
    const s = expectStatus(await share(team.ownerKey, ws.id, a.threadId), 200);
    expect((await t.api(team.ownerKey).DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', thread$(ws.id, a.threadId))).response.status).toBe(200);
    expectProblem(await open(s.token), 404);
  });

  it('never shows sources of entries the team does not all read, nor any excerpt', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    const privateId = await entry(k, false);
    const publicId = await entry(k, true);
    const a = await turn(k, ws.id, { prompt: 'What must I do when I modify the program and distribute it?', plusIds: [privateId, publicId] });
    expect(a.sources.length).toBeGreaterThan(1);
    const s = expectStatus(await share(k, ws.id, a.threadId), 200);
    // read as text, so the checks below see the exact bytes sent
    const seen = await t.api().GET('/api/v1/share/{token}', { params: { path: { token: s.token } }, parseAs: 'text' });
    const text = expectStatus(seen, 200) as unknown as string;
    const body = expectShape(SharedThread, JSON.parse(text));
    const sources = body.messages[1]!.sources;
    expect(sources).toHaveLength(a.sources.length);
    // in order, named when public, blank when private
    expect(sources.map((x) => x.filename)).toEqual(a.sources.map((x) => (x.filename === 'public-gpl.txt' ? 'public-gpl.txt' : null)));
    expect(sources.some((x) => x.filename === 'public-gpl.txt')).toBe(true);
    expect(text).not.toContain('private-gpl.txt');
    for (const x of a.sources) expect(text).not.toContain(x.excerpt.slice(0, 60));
  });
});

describe('who may share', () => {
  it('a member who cannot read the thread, or another team, cannot share, see or revoke it (404)', async () => {
    const { team, ws } = await setup({ chatHistoryType: 'USER' });
    const a = await turn(team.ownerKey, ws.id, { prompt: 'per-user history' });
    const member = await team.addUser('member');
    const other = await setup();
    for (const key of [member.key, other.team.ownerKey]) {
      expectProblem(await share(key, ws.id, a.threadId), 404);
      expectProblem(await getShare(key, ws.id, a.threadId), 404);
      expectProblem(await revoke(key, ws.id, a.threadId), 404);
    }
    expectProblem(await share(other.team.ownerKey, other.ws.id, a.threadId), 404);
    // the member may share their own thread
    const mine = await turn(member.key, ws.id, { prompt: 'the member asks' });
    expect((await share(member.key, ws.id, mine.threadId)).response.status).toBe(200);
  });

  it('a team owner/admin turns sharing off: every link dies at once and new ones are refused; a member cannot change it', async () => {
    const { team, ws } = await setup();
    const member = await team.addUser('member');
    const admin = await team.addUser('admin');
    const a = await turn(member.key, ws.id, { prompt: 'shared by a member' });
    const s = expectStatus(await share(member.key, ws.id, a.threadId), 200);
    expect((await open(s.token)).response.status).toBe(200);
    expectProblem(await setting(member.key, false), 403);
    expect((await t.api(member.key).GET('/api/v1/chat/sharing')).data).toEqual({ enabled: true });
    expect((await setting(admin.key, false)).data).toEqual({ enabled: false });
    expectProblem(await open(s.token), 404);
    const refused = await share(member.key, ws.id, a.threadId);
    expect(expectProblem(refused, 403).code).toBe('sharing_disabled');
    // another team is untouched
    const other = await setup();
    const b = await turn(other.team.ownerKey, other.ws.id, { prompt: 'elsewhere' });
    expect((await share(other.team.ownerKey, other.ws.id, b.threadId)).response.status).toBe(200);
    // on again: old links stay revoked, new ones work
    expect((await setting(team.ownerKey, true)).data).toEqual({ enabled: true });
    expectProblem(await open(s.token), 404);
    const s2 = expectStatus(await share(member.key, ws.id, a.threadId), 200);
    expect((await open(s2.token)).response.status).toBe(200);
  });
});

describe('several nodes', () => {
  /** With ATRIUM_TEST_DATABASE_URL the second node is another app instance on the same PostgreSQL database, on the embedded database the same one. */
  it('a link read on one node dies there the moment another node revokes it or turns sharing off', async () => {
    const shared = Boolean(process.env.ATRIUM_TEST_DATABASE_URL);
    const second = shared ? await startTestApp() : t;
    try {
      const { team, ws } = await setup();
      const a = await turn(team.ownerKey, ws.id, { prompt: 'seen on two nodes' });
      const s = expectStatus(await share(team.ownerKey, ws.id, a.threadId), 200);
      const read = (token: string) => open(token, second);
      expect((await read(s.token)).response.status).toBe(200);
      expect((await revoke(team.ownerKey, ws.id, a.threadId)).response.status).toBe(200);
      expectProblem(await read(s.token), 404);
      expect((await second.request({ method: 'GET', url: `/share/${s.token}` })).statusCode).toBe(404); // raw: the share page
      const s2 = expectStatus(await share(team.ownerKey, ws.id, a.threadId), 200);
      expect((await read(s2.token)).response.status).toBe(200);
      expect((await setting(team.ownerKey, false)).response.status).toBe(200);
      expectProblem(await read(s2.token), 404);
    } finally {
      if (shared) await second.close();
    }
  });
});
