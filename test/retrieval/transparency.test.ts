/**
 * Ranking transparency and follow-ups over HTTP: context-for-prompt's `explain`, the
 * rank and ranking of every chat source (and older stored sources without them), a follow-up in a
 * thread searched with its previous question's key terms — on PGlite, or on PostgreSQL when
 * ATRIUM_TEST_DATABASE_URL is set. Providers: the stand-in.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatAnswer, ChatThreadFull } from '../../src/modules/chat/schema.js';
import { ContextForPromptResponse } from '../../src/modules/plus/schema.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace } from '../helpers/factories.js';
import { expectStatus, multipartBody, type paths } from '../helpers/api.js';
import type { Part } from '../helpers/multipart.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');
const file = (name: string, contentType = 'application/octet-stream'): Part => ({
  name: 'files',
  filename: name,
  contentType,
  data: readFileSync(path.join(FIXTURES, name)),
});

const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function createPlus(key: string, fields: Record<string, string>, files: Part[]) {
  const body = multipartBody([...Object.entries(fields).map(([name, value]) => ({ name, value })), ...files]);
  return expectStatus(await t.api(key).POST('/api/v1/plus', body), 200);
}

type ContextBody = { content: string; maxTokens?: number; explain?: boolean };
const contextForPrompt = (key: string, plusId: string, body: ContextBody) =>
  t.api(key).POST('/api/v1/plus/{plusId}/context-for-prompt', { params: { path: { plusId } }, body });
const thread$ = (key: string, workspaceId: string, threadId: string) =>
  t.api(key).GET('/api/v1/chat/{workspaceId}/history/{threadId}', { params: { path: { workspaceId, threadId } } });
type Completion = paths['/api/v1/chat/{workspaceId}/completions']['post']['requestBody']['content']['application/json'];
const complete = (key: string, workspaceId: string, body: Completion) =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId } }, body });

type Ranked = { score: number; rank: number; ranking: { lexical: { score: number; rank: number } | null; vector: unknown } };
function expectRankedList(list: Ranked[]) {
  list.forEach((r, i) => {
    expect(r.rank).toBe(i + 1);
    expect(r.ranking.lexical).toEqual({ score: r.score, rank: r.rank });
    expect(r.ranking.vector).toBeNull();
    if (i > 0) expect(r.score).toBeLessThanOrEqual(list[i - 1]!.score);
  });
}

describe('context-for-prompt explain', () => {
  it('returns the ranked candidates with scores, headings and which ones were used, and the terms searched for', async () => {
    const team = await newTeam(t);
    const p = await createPlus(team.ownerKey, { title: 'docs' }, [file('mammoth-readme.md', 'text/markdown'), file('gpl-3.txt', 'text/plain')]);
    const question = 'How do I keep two Heading 1 paragraphs from being merged (freshness)?';
    const plain = expectStatus(await contextForPrompt(team.ownerKey, p.id, { content: question, maxTokens: 600 }), 200);
    expect(plain.explain).toBeUndefined();
    const res = await contextForPrompt(team.ownerKey, p.id, { content: question, maxTokens: 600, explain: true });
    const body = expectShape(ContextForPromptResponse, expectStatus(res, 200));
    // the same context either way
    expect(body.content).toBe(plain.content);
    const ex = body.explain!;
    expect(ex.method).toBe('lexical');
    expect(ex.terms.map((x) => x.lexeme)).toEqual(expect.arrayContaining(['fresh', 'merg']));
    for (const term of ex.terms) {
      expect(term.df).toBeGreaterThan(0);
      expect(term.idf).toBeGreaterThan(0);
      expect(term.carried).toBe(false);
    }
    expect(ex.results.length).toBeGreaterThan(1);
    expectRankedList(ex.results);
    const top = ex.results[0]!;
    expect(top).toMatchObject({ filename: 'mammoth-readme.md', heading: 'Freshness', used: true });
    expect(body.content).toContain(top.excerpt.slice(0, 80));
    // `used` says exactly which chunks fitted the budget
    const fileIds = new Set(p.files.map((f) => f.id));
    for (const r of ex.results) {
      expect(fileIds.has(r.fileId)).toBe(true);
      if (!r.used) expect(body.content).not.toContain(r.excerpt.replace(/…$/, ''));
    }
    expect(ex.results.some((r) => !r.used)).toBe(true);

    const none = expectShape(ContextForPromptResponse, (await contextForPrompt(team.ownerKey, p.id, { content: 'xylophone quux?', explain: true })).data);
    expect(none.explain!.method).toBe('leading');
    expect(none.explain!.terms).toEqual([]);
    expect(none.explain!.results.every((r) => r.score === 0)).toBe(true);

    expectProblem(
      await t.request({
        method: 'POST',
        url: `/api/v1/plus/${p.id}/context-for-prompt`, // raw: an explain the document does not allow
        key: team.ownerKey,
        payload: { content: question, explain: 'yes please' },
      }),
      400,
    );
  });

  it("explains nothing of an entry the caller cannot see (another team's; a private one of a teammate)", async () => {
    const team = await newTeam(t);
    const member = await team.addUser('member');
    const priv = await createPlus(team.ownerKey, { title: 'private', isPublic: 'false' }, [file('gpl-3.txt', 'text/plain')]);
    const other = await newTeam(t);
    for (const key of [member.key, other.ownerKey]) {
      expectProblem(await contextForPrompt(key, priv.id, { content: 'warranty', explain: true }), 404);
    }
  });
});

/** A team whose workspace's model is the stand-in, a Plus entry of two licences, and `ask` in that workspace over that entry. */
async function licencesWorkspace(modelFields: Record<string, unknown> = {}, wsFields: Record<string, unknown> = {}) {
  const team = await newTeam(t);
  const model = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI'), contextWindow: 16000, ...modelFields });
  const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id], ...wsFields });
  const p = await createPlus(team.ownerKey, { title: 'licences' }, [file('apache-license.docx'), file('gpl-3.txt', 'text/plain')]);
  const ask = async (prompt: string, threadId?: string) => {
    const res = await complete(team.ownerKey, ws.id, { prompt, plusIds: [p.id], ...(threadId ? { threadId } : {}) });
    return expectShape(ChatAnswer, expectStatus(res, 200));
  };
  return { team, ws, p, ask };
}

describe('chat sources and follow-ups', () => {
  const setup = () => licencesWorkspace();

  it('every source carries its final rank and its lexical ranking; stored sources read back the same', async () => {
    const { team, ws, ask } = await setup();
    const a = await ask('Is there any warranty for the program?');
    expect(a.sources.length).toBeGreaterThan(1);
    for (const src of a.sources) {
      expect(src.ranking!.lexical!.rank).toBe(src.rank);
      expect(src.ranking!.lexical!.score).toBe(src.score);
      expect(src.ranking!.vector).toBeNull();
    }
    // packing may skip a chunk that does not fit: ranks rise, scores never do
    for (let i = 1; i < a.sources.length; i++) {
      expect(a.sources[i]!.rank!).toBeGreaterThan(a.sources[i - 1]!.rank!);
      expect(a.sources[i]!.score).toBeLessThanOrEqual(a.sources[i - 1]!.score);
    }
    const thread = expectShape(ChatThreadFull, (await thread$(team.ownerKey, ws.id, a.threadId)).data);
    expect(thread.messages.find((m) => m.id === a.messageId)!.sources).toEqual(a.sources);
  });

  it('sources stored before ranks were recorded (no rank, no ranking) still serialise', async () => {
    const { team, ws, ask } = await setup();
    const a = await ask('Is there any warranty for the program?');
    const old = a.sources.map(({ plusId, fileId, filename, chunkId, score, excerpt }) => ({ plusId, fileId, filename, chunkId, score, excerpt }));
    await t.database.db.execute(sql`update chat_messages set sources = ${JSON.stringify(old)}::jsonb where id = ${a.messageId}::uuid`);
    const thread = expectShape(ChatThreadFull, expectStatus(await thread$(team.ownerKey, ws.id, a.threadId), 200));
    expect(thread.messages.find((m) => m.id === a.messageId)!.sources).toEqual(old);
  });

  it("a follow-up in a thread is searched with the previous question's key terms", async () => {
    const { p, ask } = await setup();
    const apache = p.files.find((f) => f.filename === 'apache-license.docx')!.id;
    const first = await ask('What does the Apache license say about contributions?');
    expect(first.sources[0]!.fileId).toBe(apache);
    const alone = await ask('And what about patents?');
    // as a follow-up, the Apache licence's patent grant (by each Contributor) comes first, and
    // scores more than asked alone: the carried terms (apache, contribut) count for it
    const follow = await ask('And what about patents?', first.threadId);
    expect(follow.sources[0]!.fileId).toBe(apache);
    expect(follow.sources[0]!.score).toBeGreaterThan(alone.sources.find((x) => x.chunkId === follow.sources[0]!.chunkId)?.score ?? 0);
    const top = (await t.database.db.execute(sql`select file_data_processed as text from plus_chunks where id = ${follow.sources[0]!.chunkId}`)) as unknown as {
      rows: Array<{ text: string }>;
    };
    expect(top.rows[0]!.text).toContain('Grant of Patent License');
    // the turn before that one is what is carried, not the thread's first question
    const next = await ask('What about the GPL?', follow.threadId);
    expect(next.sources.some((x) => x.filename === 'gpl-3.txt')).toBe(true);
    // carrying terms calls no model: one provider call per turn
    expect(s.standIn.requests).toHaveLength(4);
  });
});

describe('follow-ups rewritten by the model (followUpSearch: rewrite)', () => {
  const REWRITTEN = 'Does the GNU General Public License version 3 say anything about patents?';
  const onRewrite = (reply: Record<string, unknown>) => s.standIn.set({ whenPrompt: [{ contains: 'Follow-up question:', ...reply }] });

  async function setup() {
    // priced, so the ledger's credits show what was billed
    const w = await licencesWorkspace({ chatCredits: 2 }, { followUpSearch: 'rewrite' });
    expect(w.ws.followUpSearch).toBe('rewrite');
    return w;
  }

  const logOf = async (threadId: string, prompt: string) => {
    const rows = (await t.database.db.execute(
      sql`select id, prompt_tokens, completion_tokens, rewrite from prompt_logs where thread_id = ${threadId}::uuid and prompt = ${prompt}`,
    )) as unknown as {
      rows: Array<{
        id: string;
        prompt_tokens: number;
        completion_tokens: number;
        rewrite: { query: string; promptTokens: number; completionTokens: number } | null;
      }>;
    };
    expect(rows.rows).toHaveLength(1);
    return rows.rows[0]!;
  };
  const ledgerOf = async (id: string) => {
    const rows = (await t.database.db.execute(sql`select prompt_tokens, completion_tokens, credits from usage_ledger where id = ${id}::uuid`)) as unknown as {
      rows: Array<{ prompt_tokens: number; completion_tokens: number; credits: number }>;
    };
    return rows.rows[0]!;
  };

  it("searches the model's standalone question, and logs and bills the rewrite with the turn", async () => {
    const { team, ask, p } = await setup();
    const first = await ask('What does the Apache license say about contributions?');
    // a new thread's first question is not a follow-up: no rewrite
    expect(s.standIn.requests).toHaveLength(1);
    expect((await logOf(first.threadId, 'What does the Apache license say about contributions?')).rewrite).toBeNull();

    onRewrite({ reply: REWRITTEN });
    const follow = await ask('And what about patents?', first.threadId);
    // carried terms would have ranked the Apache licence's patent grant first (the test above); the rewrite names the GPL
    expect(follow.sources[0]!.filename).toBe('gpl-3.txt');
    expect(follow.sources.every((x) => x.plusId === p.id)).toBe(true);

    // two calls: the rewrite (the conversation so far, the question, a short temperature-0 reply), then the answer
    const [rewriteCall, answerCall] = s.standIn.requests.slice(1);
    expect(s.standIn.requests).toHaveLength(3);
    const asked = JSON.stringify(rewriteCall!.body.messages);
    expect(asked).toContain('What does the Apache license say about contributions?');
    expect(asked).toContain(`Echo: What does the Apache license say about contributions?`);
    expect(asked).toContain('Follow-up question: And what about patents?');
    expect(rewriteCall!.body.temperature).toBe(0);
    expect(rewriteCall!.body.max_tokens ?? rewriteCall!.body.max_completion_tokens).toBe(80);
    // the answer is asked the user's own question, with the context the rewrite found
    expect(answerCall!.body.messages.at(-1).content).toBe('And what about patents?');
    expect(JSON.stringify(answerCall!.body.messages)).toContain('GNU GENERAL PUBLIC LICENSE');

    // the prompt log shows what was searched and what the rewrite used; the ledger bills both calls
    const log = await logOf(first.threadId, 'And what about patents?');
    expect(log.rewrite!.query).toBe(REWRITTEN);
    expect(log.rewrite!.promptTokens).toBeGreaterThan(0);
    expect(log.rewrite!.completionTokens).toBe(REWRITTEN.split(' ').length);
    expect(log.prompt_tokens).toBe(follow.usage.promptTokens);
    const billed = await ledgerOf(log.id);
    expect(billed.prompt_tokens).toBe(follow.usage.promptTokens + log.rewrite!.promptTokens);
    expect(billed.completion_tokens).toBe(follow.usage.completionTokens + log.rewrite!.completionTokens);
    expect(billed.credits).toBeCloseTo(((billed.prompt_tokens + billed.completion_tokens) * 2) / 1000, 9);

    // the prompt log API returns it
    const listed = expectStatus(await t.api(team.ownerKey).GET('/api/v1/chat/prompt-logs/paged', { params: { query: { size: 10 } } }), 200).content;
    expect(listed.find((l) => l.id === log.id)!.rewrite).toEqual(log.rewrite);
  });

  it('a rewrite that fails is searched with carried terms; the answer still comes and only what was billed is counted', async () => {
    const { ask } = await setup();
    const first = await ask('What does the Apache license say about contributions?');
    onRewrite({ failStatus: 500 });
    const follow = await ask('And what about patents?', first.threadId);
    // the carried terms' result (the Apache licence's patent grant)
    expect(follow.sources[0]!.filename).toBe('apache-license.docx');
    expect(follow.message.content).toBe('Echo: And what about patents?');
    expect(s.standIn.requests).toHaveLength(3);
    const log = await logOf(first.threadId, 'And what about patents?');
    expect(log.rewrite).toBeNull();
    expect(await ledgerOf(log.id)).toMatchObject({ prompt_tokens: follow.usage.promptTokens, completion_tokens: follow.usage.completionTokens });
  });

  it('an empty rewrite is not searched for, but its tokens are billed', async () => {
    const { ask } = await setup();
    const first = await ask('What does the Apache license say about contributions?');
    onRewrite({ reply: '""' });
    const follow = await ask('And what about patents?', first.threadId);
    expect(follow.sources[0]!.filename).toBe('apache-license.docx');
    const log = await logOf(first.threadId, 'And what about patents?');
    expect(log.rewrite).toBeNull();
    const billed = await ledgerOf(log.id);
    expect(billed.prompt_tokens).toBeGreaterThan(follow.usage.promptTokens);
    expect(billed.completion_tokens).toBe(follow.usage.completionTokens + 1);
  });

  it('earlier turns sent in the request are the conversation of a turn without a thread', async () => {
    const { ws, team, p } = await setup();
    onRewrite({ reply: REWRITTEN });
    const res = await complete(team.ownerKey, ws.id, {
      plusIds: [p.id],
      messages: [
        { role: 'user', content: 'What does the Apache license say about contributions?' },
        { role: 'assistant', content: 'Contributions are licensed under the same terms.' },
        { role: 'user', content: 'And what about patents?' },
      ],
    });
    expect(expectStatus(res, 200).sources[0]!.filename).toBe('gpl-3.txt');
    expect(s.standIn.requests).toHaveLength(2);
    expect(JSON.stringify(s.standIn.requests[0]!.body.messages)).toContain('Assistant: Contributions are licensed under the same terms.');
  });

  it('a follow-up over budget is refused before any provider call, the rewrite included', async () => {
    const { team, ws, ask } = await setup();
    const first = await ask('What does the Apache license say about contributions?');
    const budget = await t.api(team.ownerKey).POST('/api/v1/budgets', { body: { scope: 'team', scopeId: team.teamId, period: 'total', credits: 0.001 } });
    expectStatus(budget, 201);
    onRewrite({ reply: REWRITTEN });
    const res = await complete(team.ownerKey, ws.id, { prompt: 'And what about patents?', threadId: first.threadId });
    expect(expectProblem(res, 429).code).toBe('budget_exceeded');
    expect(s.standIn.requests).toHaveLength(1);
  });

  it('an entry the caller cannot see is a 404 before anything is stored or called', async () => {
    const { team, ws, ask } = await setup();
    const other = await newTeam(t);
    const theirs = await createPlus(other.ownerKey, { title: 'theirs' }, [file('gpl-3.txt', 'text/plain')]);
    const first = await ask('What does the Apache license say about contributions?');
    const res = await complete(team.ownerKey, ws.id, { prompt: 'And what about patents?', threadId: first.threadId, plusIds: [theirs.id] });
    expectProblem(res, 404);
    expect(s.standIn.requests).toHaveLength(1);
    const thread = expectStatus(await thread$(team.ownerKey, ws.id, first.threadId), 200);
    expect(thread.messages).toHaveLength(2);
  });

  it('is a workspace setting: carry by default, rewrite when asked, anything else a 400', async () => {
    const team = await newTeam(t);
    const ws = await createWorkspace(t, team.ownerKey, {});
    expect(ws.followUpSearch).toBe('carry');
    // raw: a value the document does not allow
    const bad = await t.request({ method: 'PATCH', url: `/api/v1/workspaces/${ws.id}`, key: team.ownerKey, payload: { followUpSearch: 'sometimes' } });
    expectProblem(bad, 400);
    const at = { params: { path: { workspaceId: ws.id } } };
    const ok = await t.api(team.ownerKey).PATCH('/api/v1/workspaces/{workspaceId}', { ...at, body: { followUpSearch: 'rewrite' } });
    expect(expectStatus(ok, 200).followUpSearch).toBe('rewrite');
    expect(expectStatus(await t.api(team.ownerKey).GET('/api/v1/workspaces/{workspaceId}', at), 200).followUpSearch).toBe('rewrite');
  });
});
