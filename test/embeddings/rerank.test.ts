import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatAnswer } from '../../src/modules/chat/schema.js';
import { RerankSettings } from '../../src/modules/embeddings/schema.js';
import { ContextForPromptResponse, Plus } from '../../src/modules/plus/schema.js';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { createModel, createWorkspace, type ModelBody } from '../helpers/factories.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';

/**
 * Reranking over HTTP: a model of kind `rerank` (a server answering POST {url}/rerank, here the
 * stand-in's), chosen as the team's rerank model, orders retrieval's best candidates.
 */
const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ embeddings: { workerIntervalMs: 0, batchSize: 8, retryBaseMs: 0, retryMaxMs: 0, claimMs: 60_000 } });
});
afterAll(() => t.close());

// every chunk mentions the backup; only one says where the keys are, and full text ranks it last
const TEXTS = [
  'The backup runs nightly. The backup backup schedule is in the backup wiki.',
  'The backup copies every database. Backup logs go to the backup folder.',
  'Backup: keep the vault keys in the safe on the third floor.',
];
const QUESTION = 'Where is the backup?';

async function createPlus(key: string) {
  const files = TEXTS.map((text, i) => ({ name: 'files', filename: `doc-${i}.txt`, contentType: 'text/plain', data: Buffer.from(text) }));
  const body = multipartBody([{ name: 'title', value: 'Ops' }, { name: 'isPublic', value: 'true' }, ...files]);
  return expectShape(Plus, expectStatus(await t.api(key).POST('/api/v1/plus', body), 200));
}

const rerankModel = (team: TeamFixture, over: Record<string, unknown> = {}) =>
  createModel(t, team.ownerKey, { ...s.modelBody('OPENAI', { baseModel: 'rerank-test' }), kind: 'rerank', ...over });
const choose = (key: string, rerankModelId: string | null) => t.api(key).PUT('/api/v1/embeddings/rerank', { body: { rerankModelId } });
const explain = async (key: string, plusId: string, content = QUESTION) => {
  const res = await t.api(key).POST('/api/v1/plus/{plusId}/context-for-prompt', { params: { path: { plusId } }, body: { content, explain: true } });
  return expectShape(ContextForPromptResponse, expectStatus(res, 200)).explain!;
};
const rerankRequests = () => s.standIn.requests.filter((r) => r.path.endsWith('/rerank'));

describe('rerank models', () => {
  it('a rerank model is an OPENAI URL model; it cannot answer chats, and the connection test ranks with it', async () => {
    const team = await newTeam(t);
    const model = await rerankModel(team);
    expect(model.kind).toBe('rerank');
    const api = t.api(team.ownerKey);
    const anthropic = await api.POST('/api/v1/models', { body: { ...(s.modelBody('ANTHROPIC') as ModelBody), name: 'r', kind: 'rerank' } });
    expect(expectProblem(anthropic, 400).code).toBe('validation_failed');
    const azure = await api.POST('/api/v1/models', { body: { ...(s.modelBody('AZURE') as ModelBody), name: 'r2', kind: 'rerank' } });
    expect(expectProblem(azure, 400).code).toBe('validation_failed');
    const ws = await api.POST('/api/v1/workspaces', { body: { name: 'w', modelIds: [model.id] } });
    expect(expectProblem(ws, 400).code).toBe('not_a_chat_model');
    const test = await api.POST('/api/v1/models/{modelId}/test', { params: { path: { modelId: model.id } }, body: {} });
    expect(expectStatus(test, 200)).toMatchObject({ ok: true, error: null });
    expect(rerankRequests().at(-1)!.body).toMatchObject({ model: 'rerank-test', documents: [expect.any(String), 'Unrelated text.'] });
  });

  it('only owners/admins choose; a chat model, an unknown model or another team’s model is refused alike', async () => {
    const team = await newTeam(t);
    const other = await newTeam(t);
    const chatModel = await createModel(t, team.ownerKey, s.modelBody('OPENAI'));
    const theirs = await rerankModel(other);
    const mine = await rerankModel(team);
    const none = expectShape(RerankSettings, expectStatus(await t.api(team.ownerKey).GET('/api/v1/embeddings/rerank'), 200));
    expect(none).toMatchObject({ rerankModelId: null, modelName: null, updated: null });
    const member = await team.addUser('member');
    expectProblem(await choose(member.key, mine.id), 403);
    expect(expectProblem(await choose(team.ownerKey, chatModel.id), 400).code).toBe('not_a_rerank_model');
    const foreign = await choose(team.ownerKey, theirs.id);
    const missing = await choose(team.ownerKey, '00000000-0000-4000-8000-000000000000');
    const foreignProblem = expectProblem(foreign, 400);
    const missingProblem = expectProblem(missing, 400);
    expect(foreignProblem.code).toBe('model_not_available');
    expect(missingProblem.code).toBe('model_not_available');
    expect(foreignProblem.detail).toBe(missingProblem.detail);
    expectProblem(await choose(team.ownerKey, 'nope'), 400);
    const set = await choose(team.ownerKey, mine.id);
    expect(expectShape(RerankSettings, expectStatus(set, 200))).toMatchObject({ rerankModelId: mine.id, modelName: mine.name });
  });
});

describe('reranking', () => {
  it('without a rerank model: no rerank call; with one, retrieval’s best candidates come in its order', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey);
    const vault = plus.files.find((f) => f.filename === 'doc-2.txt')!.id;
    const plain = await explain(team.ownerKey, plus.id);
    expect(plain.results[0]!.fileId).not.toBe(vault);
    expect(plain.results.every((r) => r.ranking.rerank === undefined)).toBe(true);
    expect(rerankRequests()).toHaveLength(0);

    const model = await rerankModel(team);
    expectStatus(await choose(team.ownerKey, model.id), 200);
    s.standIn.set({ rerankPrefer: ['vault keys'] });
    const ranked = await explain(team.ownerKey, plus.id);
    expect(ranked.results[0]!.fileId).toBe(vault);
    expect(ranked.results[0]!.ranking.rerank).toEqual({ score: expect.any(Number), rank: 1 });
    expect(ranked.results[0]!.ranking.lexical!.rank).toBeGreaterThan(1);
    expect(ranked.results.map((r) => r.rank)).toEqual(ranked.results.map((_, i) => i + 1));
    const sent = rerankRequests();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ model: 'rerank-test', query: QUESTION, top_n: 3 });
    expect((sent[0]!.body.documents as string[]).sort()).toEqual([...TEXTS].sort());
  });

  it('a failing rerank model leaves retrieval’s order; a chat turn’s sources carry the rerank place', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey);
    const plain = await explain(team.ownerKey, plus.id);
    const model = await rerankModel(team);
    expectStatus(await choose(team.ownerKey, model.id), 200);
    s.standIn.set({ failRerank: 503 });
    const failed = await explain(team.ownerKey, plus.id);
    expect(failed.results.map((r) => r.chunkId)).toEqual(plain.results.map((r) => r.chunkId));
    expect(rerankRequests().length).toBeGreaterThan(0);

    s.standIn.set({ failRerank: null, rerankPrefer: ['vault keys'] });
    const chatModel = await createModel(t, team.ownerKey, s.modelBody('OPENAI'));
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [chatModel.id] });
    const res = await t
      .api(team.ownerKey)
      .POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId: ws.id } }, body: { prompt: QUESTION, plusIds: [plus.id] } });
    const answer = expectShape(ChatAnswer, expectStatus(res, 200));
    expect(answer.sources[0]!.filename).toBe('doc-2.txt');
    expect(answer.sources[0]!.ranking!.rerank).toEqual({ score: expect.any(Number), rank: 1 });
    // cleared: retrieval's own order again
    expectStatus(await choose(team.ownerKey, null), 200);
    await new Promise((r) => setTimeout(r, 2_100)); // the team-model cache (2 s)
    expect((await explain(team.ownerKey, plus.id)).results.map((r) => r.chunkId)).toEqual(plain.results.map((r) => r.chunkId));
  });
});
