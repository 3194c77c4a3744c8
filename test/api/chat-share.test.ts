/** Sharing a thread by link: the snapshot, the public read, revocation, the team setting, and who may. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { multipart } from '../helpers/multipart.js';
import { expectShape } from '../helpers/shape.js';
import { ChatShare, SharedThread } from '../../src/modules/chat/schema.js';
import { startStandInProvider, type StandInProvider } from '../support/standin-provider.js';

let t: TestApp;
let standIn: StandInProvider;

beforeAll(async () => {
  standIn = await startStandInProvider();
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  await standIn.close();
});
beforeEach(() => standIn.reset());

async function setup(ws: Record<string, unknown> = {}, team?: TeamFixture) {
  team ??= await newTeam(t);
  const model = await createModel(t, team.ownerKey, { name: 'Stand-in GPT', url: standIn.openaiBaseUrl, contextWindow: 16000 });
  const w = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], ...ws });
  return { team, ws: w };
}

async function turn(key: string, wsId: string, payload: Record<string, unknown>) {
  const res = await t.request({ method: 'POST', url: `/api/v1/chat/${wsId}/completions`, key, payload });
  expect(res.statusCode).toBe(200);
  return res.json() as { threadId: string; messageId: string; sources: Array<{ excerpt: string; filename: string }> };
}

const shareUrl = (wsId: string, threadId: string) => `/api/v1/chat/${wsId}/history/${threadId}/share`;
const share = (key: string, wsId: string, threadId: string) => t.request({ method: 'POST', url: shareUrl(wsId, threadId), key });
/** What anyone with the link reads: no key, no cookie. */
const open = (token: string) => t.request({ method: 'GET', url: `/api/v1/share/${encodeURIComponent(token)}` });

async function entry(key: string, isPublic: boolean) {
  const form = multipart([
    { name: 'title', value: isPublic ? 'Public GPL' : 'Private GPL' },
    { name: 'isPublic', value: String(isPublic) },
    {
      name: 'files',
      filename: isPublic ? 'public-gpl.txt' : 'private-gpl.txt',
      contentType: 'text/plain',
      data: readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'gpl-3.txt')),
    },
  ]);
  const res = await t.request({ method: 'POST', url: '/api/v1/plus', key, ...form });
  expect(res.statusCode).toBe(200);
  expect(res.json().isPublic).toBe(isPublic);
  return res.json().id as string;
}

describe('sharing a thread', () => {
  it('shows the thread as it was when shared, signed out; sharing again moves it under the same link; revoking kills it at once', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    const a = await turn(k, ws.id, { prompt: 'first question' });
    const res = await share(k, ws.id, a.threadId);
    expect(res.statusCode).toBe(200);
    const s = expectShape(ChatShare, res.json());
    expect(s.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.url).toMatch(new RegExp(`^https?://[^/]+/share/${s.token}$`));
    // later turns and versions are not in the share
    await turn(k, ws.id, { prompt: 'second question', threadId: a.threadId });
    standIn.set({ reply: 'regenerated' });
    await turn(k, ws.id, { regenerate: a.messageId });
    const seen = await open(s.token);
    expect(seen.statusCode).toBe(200);
    expect(seen.headers['cache-control']).toBe('no-store');
    const body = expectShape(SharedThread, seen.json());
    expect(body.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'first question'],
      ['assistant', 'Echo: first question'],
    ]);
    expect(body.messages[1]!.modelName).toBe('Stand-in GPT');
    // the page itself is served signed out (the app's index, or the "not built" page), 404 once revoked
    const page = await t.request({ method: 'GET', url: `/share/${s.token}` });
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    // the sharer sees the link again; sharing again keeps it and moves the snapshot to the thread as it reads now
    const got = await t.request({ method: 'GET', url: shareUrl(ws.id, a.threadId), key: k });
    expect(got.json()).toEqual(s);
    const again = expectShape(ChatShare, (await share(k, ws.id, a.threadId)).json());
    expect(again.token).toBe(s.token);
    expect((await open(s.token)).json().messages.map((m: { content: string }) => m.content)).toEqual(['first question', 'regenerated']);
    // revoked: 404 at once, the page too
    const del = await t.request({ method: 'DELETE', url: shareUrl(ws.id, a.threadId), key: k });
    expect(del.statusCode).toBe(200);
    expectProblem(await open(s.token), 404);
    expect((await t.request({ method: 'GET', url: `/share/${s.token}` })).statusCode).toBe(404);
    expectProblem(await t.request({ method: 'GET', url: shareUrl(ws.id, a.threadId), key: k }), 404);
    expectProblem(await t.request({ method: 'DELETE', url: shareUrl(ws.id, a.threadId), key: k }), 404);
    // a new share is a new link: the old one stays dead
    const fresh = expectShape(ChatShare, (await share(k, ws.id, a.threadId)).json());
    expect(fresh.token).not.toBe(s.token);
    expectProblem(await open(s.token), 404);
  });

  it('answers 404 for an unknown or malformed token and for a deleted thread', async () => {
    const { team, ws } = await setup();
    expectProblem(await open('A'.repeat(43)), 404);
    expectProblem(await open('not a token'), 404);
    expect((await t.request({ method: 'GET', url: '/share/nope' })).statusCode).toBe(404);
    const a = await turn(team.ownerKey, ws.id, { prompt: 'gone soon' });
    const s = (await share(team.ownerKey, ws.id, a.threadId)).json();
    expect((await t.request({ method: 'DELETE', url: `/api/v1/chat/${ws.id}/history/${a.threadId}`, key: team.ownerKey })).statusCode).toBe(200);
    expectProblem(await open(s.token), 404);
  });

  it('never shows sources of entries the team does not all read, nor any excerpt', async () => {
    const { team, ws } = await setup();
    const k = team.ownerKey;
    const privateId = await entry(k, false);
    const publicId = await entry(k, true);
    const a = await turn(k, ws.id, { prompt: 'What must I do when I modify the program and distribute it?', plusIds: [privateId, publicId] });
    expect(a.sources.length).toBeGreaterThan(1);
    const s = (await share(k, ws.id, a.threadId)).json();
    const seen = await open(s.token);
    const body = expectShape(SharedThread, seen.json());
    const sources = body.messages[1]!.sources;
    expect(sources).toHaveLength(a.sources.length);
    // in order, named when public, blank when private
    expect(sources.map((x) => x.filename)).toEqual(a.sources.map((x) => (x.filename === 'public-gpl.txt' ? 'public-gpl.txt' : null)));
    expect(sources.some((x) => x.filename === 'public-gpl.txt')).toBe(true);
    expect(seen.body).not.toContain('private-gpl.txt');
    for (const x of a.sources) expect(seen.body).not.toContain(x.excerpt.slice(0, 60));
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
      expectProblem(await t.request({ method: 'GET', url: shareUrl(ws.id, a.threadId), key }), 404);
      expectProblem(await t.request({ method: 'DELETE', url: shareUrl(ws.id, a.threadId), key }), 404);
    }
    expectProblem(await share(other.team.ownerKey, other.ws.id, a.threadId), 404);
    // the member may share their own thread
    const mine = await turn(member.key, ws.id, { prompt: 'the member asks' });
    expect((await share(member.key, ws.id, mine.threadId)).statusCode).toBe(200);
  });

  it('a team owner/admin turns sharing off: every link dies at once and new ones are refused; a member cannot change it', async () => {
    const { team, ws } = await setup();
    const member = await team.addUser('member');
    const admin = await team.addUser('admin');
    const a = await turn(member.key, ws.id, { prompt: 'shared by a member' });
    const s = (await share(member.key, ws.id, a.threadId)).json();
    expect((await open(s.token)).statusCode).toBe(200);
    const setting = (key: string, enabled: boolean) => t.request({ method: 'PUT', url: '/api/v1/chat/sharing', key, payload: { enabled } });
    expectProblem(await setting(member.key, false), 403);
    expect((await t.request({ method: 'GET', url: '/api/v1/chat/sharing', key: member.key })).json()).toEqual({ enabled: true });
    expect((await setting(admin.key, false)).json()).toEqual({ enabled: false });
    expectProblem(await open(s.token), 404);
    const refused = await share(member.key, ws.id, a.threadId);
    expectProblem(refused, 403);
    expect(refused.json().code).toBe('sharing_disabled');
    // another team is untouched
    const other = await setup();
    const b = await turn(other.team.ownerKey, other.ws.id, { prompt: 'elsewhere' });
    expect((await share(other.team.ownerKey, other.ws.id, b.threadId)).statusCode).toBe(200);
    // on again: old links stay revoked, new ones work
    expect((await setting(team.ownerKey, true)).json()).toEqual({ enabled: true });
    expectProblem(await open(s.token), 404);
    const s2 = (await share(member.key, ws.id, a.threadId)).json();
    expect((await open(s2.token)).statusCode).toBe(200);
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
      const s = (await share(team.ownerKey, ws.id, a.threadId)).json();
      const read = (token: string) => second.request({ method: 'GET', url: `/api/v1/share/${token}` });
      expect((await read(s.token)).statusCode).toBe(200);
      expect((await t.request({ method: 'DELETE', url: shareUrl(ws.id, a.threadId), key: team.ownerKey })).statusCode).toBe(200);
      expectProblem(await read(s.token), 404);
      expect((await second.request({ method: 'GET', url: `/share/${s.token}` })).statusCode).toBe(404);
      const s2 = (await share(team.ownerKey, ws.id, a.threadId)).json();
      expect((await read(s2.token)).statusCode).toBe(200);
      expect((await t.request({ method: 'PUT', url: '/api/v1/chat/sharing', key: team.ownerKey, payload: { enabled: false } })).statusCode).toBe(200);
      expectProblem(await read(s2.token), 404);
    } finally {
      if (shared) await second.close();
    }
  });
});
