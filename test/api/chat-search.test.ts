import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { PageOf } from '../../src/http/paging.js';
import { ChatSearchHit } from '../../src/modules/chat/schema.js';
import { expectStatus } from '../helpers/api.js';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';

let t: TestApp;
const stand = useStandIn();

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const SearchPage = PageOf(Type.Ref('ChatSearchHit'));
type Hit = {
  threadId: string;
  workspaceId: string;
  messageId: string;
  title: string;
  snippet: string;
  highlights: Array<[number, number]>;
  titleHighlights: Array<[number, number]>;
  created: string;
};
type Page = {
  content: Hit[];
  totalElements: number;
  totalPages: number;
  number: number;
  size: number;
  numberOfElements: number;
  first: boolean;
  last: boolean;
  empty: boolean;
};

type SearchQuery = { q: string; workspaceId?: string; page?: number; size?: number };
const searchOf = (key: string | null, query: SearchQuery) => t.api(key).GET('/api/v1/chat/search', { params: { query } });

async function search(key: string, query: SearchQuery): Promise<Page> {
  const res = await searchOf(key, query);
  const page = expectShape(SearchPage, expectStatus(res, 200)) as unknown as Page;
  for (const h of page.content) expectShape(ChatSearchHit, h);
  return page;
}

async function chatModel(team: TeamFixture) {
  return createModel(t, team.ownerKey, { apiBase: 'OPENAI', url: stand.standIn.openaiBaseUrl, baseModel: 'gpt-test', apiKey: 'sk-test' });
}

/** One turn in a new thread: the user's prompt and the stand-in's reply (`Echo: prompt` unless `reply`). */
async function turn(key: string, wsId: string, prompt: string, opts: { reply?: string; threadId?: string } = {}) {
  if (opts.reply) stand.standIn.set({ reply: opts.reply });
  const res = await t.api(key).POST('/api/v1/chat/{workspaceId}/completions', {
    params: { path: { workspaceId: wsId } },
    body: { prompt, ...(opts.threadId ? { threadId: opts.threadId } : {}) },
  });
  stand.standIn.set({ reply: null });
  return expectStatus(res, 200);
}

async function rename(key: string, wsId: string, threadId: string, title: string) {
  expectStatus(
    await t.api(key).POST('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: wsId, threadId } }, body: { title } }),
    200,
  );
}

const ids = (p: Page) => p.content.map((h) => h.threadId).sort();
const marked = (text: string, spans: Array<[number, number]>) => spans.map(([s, e]) => text.slice(s, e));

describe('visibility', () => {
  // Team A: owner O, members M1 and M2. Team B: owner P. Every thread says "zebrafish" and a word of its own.
  let A: TeamFixture;
  let B: TeamFixture;
  let M1: { id: number; key: string };
  let M2: { id: number; key: string };
  const th: Record<string, string> = {};
  const ws: Record<string, string> = {};
  let failedUserMessage = '';
  let failedDetail = '';

  beforeAll(async () => {
    A = await newTeam(t);
    B = await newTeam(t);
    M1 = await A.addUser('member');
    M2 = await A.addUser('member');
    const mA = await chatModel(A);
    const mB = await chatModel(B);
    ws.team = (await createWorkspace(t, A.ownerKey, { modelIds: [mA.id] })).id;
    ws.user = (await createWorkspace(t, A.ownerKey, { modelIds: [mA.id], chatHistoryType: 'USER' })).id;
    ws.priv = (await createWorkspace(t, M1.key, { modelIds: [mA.id], sharingType: 'PRIVATE' })).id;
    ws.other = (await createWorkspace(t, B.ownerKey, { modelIds: [mB.id] })).id;
    th.alpha = (await turn(A.ownerKey, ws.team, 'zebrafish alpha')).threadId;
    th.bravo = (await turn(M1.key, ws.team, 'zebrafish bravo')).threadId;
    th.charlie = (await turn(A.ownerKey, ws.user, 'zebrafish charlie')).threadId;
    th.delta = (await turn(M1.key, ws.user, 'zebrafish delta')).threadId;
    th.ember = (await turn(M1.key, ws.priv, 'zebrafish ember')).threadId;
    th.foxtrot = (await turn(B.ownerKey, ws.other, 'zebrafish foxtrot')).threadId;
    // a deleted thread
    th.hotel = (await turn(A.ownerKey, ws.team, 'zebrafish hotel')).threadId;
    const hotel = { params: { path: { workspaceId: ws.team, threadId: th.hotel } } };
    expect((await t.api(A.ownerKey).DELETE('/api/v1/chat/{workspaceId}/history/{threadId}', hotel)).response.status).toBe(200);
    // a failed turn: its question is kept (and found), its error message carries no text to find
    stand.standIn.set({ failStatus: 500 });
    const api = t.api(M2.key);
    const failed = await api.POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.team } }, body: { prompt: 'zebrafish golf' } });
    stand.standIn.reset();
    const problem = expectProblem(failed, 502);
    failedDetail = String(problem.detail);
    const threads = expectStatus(await api.GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId: ws.team } } }), 200);
    th.golf = threads.find((x) => x.title.includes('golf'))!.id;
    const full = expectStatus(
      await api.GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: ws.team, threadId: th.golf } } }),
      200,
    );
    expect(full.messages.map((m) => m.status)).toEqual(['ok', 'error']);
    failedUserMessage = full.messages[0]!.id;
  });

  it('finds exactly the threads each person may read', async () => {
    expect(ids(await search(A.ownerKey, { q: 'zebrafish' }))).toEqual([th.alpha, th.bravo, th.charlie, th.golf].sort());
    expect(ids(await search(M1.key, { q: 'zebrafish' }))).toEqual([th.alpha, th.bravo, th.delta, th.ember, th.golf].sort());
    expect(ids(await search(M2.key, { q: 'zebrafish' }))).toEqual([th.alpha, th.bravo, th.golf].sort());
    expect(ids(await search(B.ownerKey, { q: 'zebrafish' }))).toEqual([th.foxtrot]);
  });

  it('never shows another user’s thread of a per-user history, even to the team owner', async () => {
    expect((await search(A.ownerKey, { q: 'delta' })).content).toEqual([]);
    expect(ids(await search(M1.key, { q: 'delta' }))).toEqual([th.delta]);
    expect((await search(M2.key, { q: 'charlie' })).content).toEqual([]);
  });

  it('never shows a private workspace’s threads to anyone but its creator', async () => {
    expect((await search(A.ownerKey, { q: 'ember' })).content).toEqual([]);
    expect((await search(M2.key, { q: 'ember' })).content).toEqual([]);
    expect(ids(await search(M1.key, { q: 'ember' }))).toEqual([th.ember]);
  });

  it('never crosses teams, and says 404 for a workspace the caller cannot see', async () => {
    expect((await search(B.ownerKey, { q: 'alpha' })).content).toEqual([]);
    expect((await search(A.ownerKey, { q: 'foxtrot' })).content).toEqual([]);
    expectProblem(await searchOf(B.ownerKey, { q: 'alpha', workspaceId: ws.team! }), 404);
    expectProblem(await searchOf(M2.key, { q: 'ember', workspaceId: ws.priv! }), 404);
    expectProblem(await searchOf(A.ownerKey, { q: 'ember', workspaceId: ws.priv! }), 404);
  });

  it('narrows to one workspace, still within its history rule', async () => {
    expect(ids(await search(A.ownerKey, { q: 'zebrafish', workspaceId: ws.team! }))).toEqual([th.alpha, th.bravo, th.golf].sort());
    expect(ids(await search(A.ownerKey, { q: 'zebrafish', workspaceId: ws.user! }))).toEqual([th.charlie]);
    expect((await search(M2.key, { q: 'zebrafish', workspaceId: ws.user! })).content).toEqual([]);
  });

  it('finds nothing of a deleted thread', async () => {
    expect((await search(A.ownerKey, { q: 'hotel' })).content).toEqual([]);
  });

  it('finds a failed turn by its question, never by its error message', async () => {
    const golf = (await search(M2.key, { q: 'golf' })).content;
    expect(golf.map((h) => [h.threadId, h.messageId])).toEqual([[th.golf, failedUserMessage]]);
    const word = failedDetail
      .split(/\W+/)
      .filter((w) => w.length > 4)
      .sort((a, b) => b.length - a.length)[0]!;
    expect(word).toBeTruthy();
    expect((await search(M2.key, { q: word, workspaceId: ws.team! })).content).toEqual([]);
  });

  it('finds the same threads as each person’s history lists (one visibility rule)', async () => {
    for (const key of [A.ownerKey, M1.key, M2.key, B.ownerKey]) {
      const api = t.api(key);
      const workspaces = expectStatus(await api.GET('/api/v1/workspaces'), 200);
      const listed: string[] = [];
      for (const w of workspaces) {
        const threads = expectStatus(await api.GET('/api/v1/chat/{workspaceId}/history', { params: { path: { workspaceId: w.id } } }), 200);
        listed.push(...threads.map((x) => x.id));
      }
      expect(listed.length).toBeGreaterThan(0);
      expect(ids(await search(key, { q: 'zebrafish' }))).toEqual(listed.sort());
    }
  });
});

describe('ranking, snippets and highlights', () => {
  let team: TeamFixture;
  let wsId: string;
  beforeAll(async () => {
    team = await newTeam(t);
    const m = await chatModel(team);
    wsId = (await createWorkspace(t, team.ownerKey, { modelIds: [m.id] })).id;
  });

  it('puts a title hit before a message hit, and a thread with both first', async () => {
    const titleOnly = await turn(team.ownerKey, wsId, 'where do they live?', { reply: 'In Western Australia, mostly on Rottnest Island.' });
    await rename(team.ownerKey, wsId, titleOnly.threadId, 'Quokka habitats');
    const messageOnly = await turn(team.ownerKey, wsId, 'I saw a quokka on holiday', { reply: 'That sounds lovely.' });
    await rename(team.ownerKey, wsId, messageOnly.threadId, 'Holiday notes');
    const both = await turn(team.ownerKey, wsId, 'Tell me about the quokka', { reply: 'The quokka is a small marsupial.' });
    await rename(team.ownerKey, wsId, both.threadId, 'Quokka facts');

    const page = await search(team.ownerKey, { q: 'quokka' });
    expect(page.content.map((h) => h.threadId)).toEqual([both.threadId, titleOnly.threadId, messageOnly.threadId]);
    const [b, tOnly, mOnly] = page.content as [Hit, Hit, Hit];
    expect(marked(b.title, b.titleHighlights)).toEqual(['Quokka']);
    expect(marked(b.snippet, b.highlights).map((w) => w.toLowerCase())).toEqual(marked(b.snippet, b.highlights).map(() => 'quokka'));
    // a title hit opens at the thread's first message
    const full = expectStatus(
      await t
        .api(team.ownerKey)
        .GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: wsId, threadId: titleOnly.threadId } } }),
      200,
    );
    expect(tOnly).toMatchObject({ messageId: full.messages[0]!.id, title: 'Quokka habitats', snippet: 'where do they live?', highlights: [] });
    expect(marked(tOnly.title, tOnly.titleHighlights)).toEqual(['Quokka']);
    expect(mOnly).toMatchObject({ title: 'Holiday notes', titleHighlights: [], snippet: 'I saw a quokka on holiday' });
    expect(marked(mOnly.snippet, mOnly.highlights)).toEqual(['quokka']);
    // the stem matches other forms, and the last word matches as a prefix while it is being typed
    expect((await search(team.ownerKey, { q: 'habitat' })).content.map((h) => h.threadId)).toEqual([titleOnly.threadId]);
    expect((await search(team.ownerKey, { q: 'quok' })).totalElements).toBe(3);
    expect((await search(team.ownerKey, { q: 'quok ' })).totalElements).toBe(0);
    expect((await search(team.ownerKey, { q: 'small marsup' })).content.map((h) => h.threadId)).toEqual([both.threadId]);
  });

  it('cuts the snippet around the match in a long message and points the offsets at the words', async () => {
    const before = 'Lorem ipsum dolor sit amet. '.repeat(60);
    const after = ' Sed do eiusmod tempor incididunt.'.repeat(60);
    const { threadId, messageId } = await turn(team.ownerKey, wsId, 'a long one', { reply: `${before}The   platypus\n\nswims at night.${after}` });
    const [hit, ...rest] = (await search(team.ownerKey, { q: 'platypus swimming' })).content;
    expect(rest).toEqual([]);
    expect(hit).toMatchObject({ threadId, messageId, workspaceId: wsId });
    expect(hit!.snippet.length).toBeLessThan(400);
    expect(hit!.snippet).toContain('The platypus swims at night.');
    expect(hit!.snippet).not.toMatch(/\s{2}|\n/);
    expect(marked(hit!.snippet, hit!.highlights)).toEqual(['platypus', 'swims']);
    const full = expectStatus(
      await t.api(team.ownerKey).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId: wsId, threadId } } }),
      200,
    );
    expect(hit!.created).toBe(full.messages.find((m) => m.id === messageId)!.created);
  });

  it('pages through many hits, best first, without repeating a thread', async () => {
    const made: string[] = [];
    for (let i = 0; i < 23; i++) made.push((await turn(team.ownerKey, wsId, `numbat sighting ${i}`)).threadId);
    const seen: string[] = [];
    for (let p = 0; p < 3; p++) {
      const page = await search(team.ownerKey, { q: 'numbat', size: 10, page: p });
      expect(page).toMatchObject({
        totalElements: 23,
        totalPages: 3,
        number: p,
        size: 10,
        numberOfElements: p < 2 ? 10 : 3,
        first: p === 0,
        last: p === 2,
        empty: false,
      });
      seen.push(...page.content.map((h) => h.threadId));
    }
    expect(seen.sort()).toEqual(made.sort());
    expect(await search(team.ownerKey, { q: 'numbat', size: 10, page: 3 })).toMatchObject({
      content: [],
      totalElements: 23,
      totalPages: 3,
      empty: true,
      last: true,
    });
  });

  it('answers an empty page for text without a word', async () => {
    expect(await search(team.ownerKey, { q: '?!' })).toMatchObject({ content: [], totalElements: 0, empty: true });
  });
});

describe('bad input', () => {
  let key: string;
  beforeAll(async () => {
    key = (await newTeam(t)).ownerKey;
  });
  const get = (query: SearchQuery, k: string | null = key) => searchOf(k, query);

  it('refuses a missing, empty, blank or too long q', async () => {
    // raw: q left out
    const missing = expectProblem(await t.request({ method: 'GET', url: '/api/v1/chat/search', key }), 400);
    expect(JSON.stringify(missing.errors)).toContain('querystring/q');
    for (const q of ['', '   ', 'x'.repeat(201)]) {
      const p = expectProblem(await get({ q }), 400);
      expect(JSON.stringify(p.errors)).toContain('querystring/q');
    }
  });

  it('refuses a bad workspaceId, page or size', async () => {
    expectProblem(await get({ q: 'x', workspaceId: 'not-a-uuid' }), 400);
    expectProblem(await get({ q: 'x', size: 0 }), 400);
    expectProblem(await get({ q: 'x', size: 1001 }), 400);
    expectProblem(await get({ q: 'x', page: -1 }), 400);
  });

  it('needs a key', async () => {
    expectProblem(await get({ q: 'x' }, null), 401);
  });

  it('treats query syntax as words, never as an error', async () => {
    for (const q of ['a & b | !c', "'quoted':*", 'x <-> y', '(((', 'é:* ü']) {
      expect((await get({ q })).response.status).toBe(200);
    }
  });
});
