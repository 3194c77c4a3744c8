import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingSettings } from '../../src/modules/embeddings/schema.js';
import { ChatAnswer } from '../../src/modules/chat/schema.js';
import { Plus } from '../../src/modules/plus/schema.js';
import { EmbeddingsRepo } from '../../src/modules/embeddings/repo.js';
import { HYBRID } from '../../src/retrieval/fusion.js';
import { vectorSearch } from '../../src/retrieval/vector.js';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { createModel, createWorkspace, type ModelBody } from '../helpers/factories.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { expectShape } from '../helpers/shape.js';
import { LEAKED_SECRET } from '../support/standin-provider.js';
import { useStandIn } from '../support/use-standin.js';

/**
 * Hybrid retrieval end to end, over HTTP, with the stand-in's concept embeddings: the refund
 * chunk shares no word with the question ("money back"), so only the vector ranking finds it.
 */
const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  // the worker does not run on a timer here: each test runs its passes (runOnce), so nothing is timed
  t = await startTestApp({ embeddings: { workerIntervalMs: 0, batchSize: 2, retryBaseMs: 0, retryMaxMs: 0, claimMs: 60_000 } });
  // warm up (ingestion worker, tokenizer) under the hook's timeout, not the first test's
  await createPlus((await newTeam(t)).ownerKey, ['warm-up']);
});
afterAll(() => t.close());

const REFUND = 'Reimbursement is granted within thirty days of delivery, on the original card.';
const FILLERS = [
  'Order forms are kept in the back office next to the printer.',
  'Money for the coffee fund is collected every month by the office manager.',
  'Get the plants watered on Fridays; the order of the rota is on the wall.',
  'The parking garage is at the back of the building.',
];
const QUESTION = 'How do I get my money back for an order?';

const files = (texts: string[]) => texts.map((text, i) => ({ name: 'files', filename: `doc-${i}.txt`, contentType: 'text/plain', data: Buffer.from(text) }));

async function createPlus(key: string, texts: string[]) {
  const body = multipartBody([{ name: 'title', value: 'Handbook' }, { name: 'isPublic', value: 'true' }, ...files(texts)]);
  return expectShape(Plus, expectStatus(await t.api(key).POST('/api/v1/plus', body), 200));
}

const plusAt = (plusId: string) => ({ params: { path: { plusId } } });

async function getPlus(key: string, id: string) {
  return expectShape(Plus, expectStatus(await t.api(key).GET('/api/v1/plus/{plusId}', plusAt(id)), 200));
}

async function choose(key: string, embeddingModelId: string | null) {
  return t.api(key).PUT('/api/v1/embeddings/settings', { body: { embeddingModelId } });
}

async function settingsOf(key: string) {
  return expectShape(EmbeddingSettings, expectStatus(await t.api(key).GET('/api/v1/embeddings/settings'), 200));
}

/** The context-for-prompt text of an entry for a question. */
async function contextFor(key: string, plusId: string, content: string) {
  return expectStatus(await t.api(key).POST('/api/v1/plus/{plusId}/context-for-prompt', { ...plusAt(plusId), body: { content } }), 200).content;
}

const complete = (key: string, workspaceId: string, body: { prompt: string; plusIds?: string[] }) =>
  t.api(key).POST('/api/v1/chat/{workspaceId}/completions', { params: { path: { workspaceId } }, body });

async function embeddingModel(team: TeamFixture, kind: 'OPENAI' | 'GOOGLE' | 'AZURE' = 'OPENAI', over: Record<string, unknown> = {}) {
  return createModel(t, team.ownerKey, { ...s.modelBody(kind, { baseModel: `embed-${kind.toLowerCase()}` }), kind: 'embedding', ...over });
}

async function chat(key: string, workspaceId: string, plusId: string) {
  return expectShape(ChatAnswer, expectStatus(await complete(key, workspaceId, { prompt: QUESTION, plusIds: [plusId] }), 200));
}

const embedRequests = () => s.standIn.requests.filter((r) => /embed/i.test(r.path));

describe('hybrid retrieval', () => {
  it('without an embedding model: full-text only, no embedding call, no file status, sources ranked by full-text alone', async () => {
    const team = await newTeam(t);
    const model = await createModel(t, team.ownerKey, s.modelBody('OPENAI'));
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [model.id] });
    const plus = await createPlus(team.ownerKey, [REFUND, ...FILLERS]);
    expect(plus.files.every((f) => f.embedding === null)).toBe(true);
    expect(await t.services.embeddings.runOnce()).toBe(0);

    const answer = await chat(team.ownerKey, ws.id, plus.id);
    const refundFile = plus.files.find((f) => f.fileChunks[0]!.fileData.startsWith('Reimbursement'))!;
    expect(answer.sources.length).toBeGreaterThan(0);
    expect(answer.sources.map((x) => x.fileId)).not.toContain(refundFile.id);
    // full-text only: each source's ranking names its lexical place and no vector one
    for (const src of answer.sources) expect(src.ranking).toMatchObject({ lexical: { rank: expect.any(Number) }, vector: null });
    expect(await contextFor(team.ownerKey, plus.id, QUESTION)).not.toContain('Reimbursement');
    expect(embedRequests()).toHaveLength(0);
    expect(await settingsOf(team.ownerKey)).toMatchObject({ embeddingModelId: null, files: { pending: 0, ready: 0 } });
  });

  it.each(['OPENAI', 'GOOGLE', 'AZURE'] as const)('with an %s embedding model, fusion surfaces the chunk only the vectors find', async (kind) => {
    const team = await newTeam(t);
    const chatModel = await createModel(t, team.ownerKey, s.modelBody('OPENAI'));
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [chatModel.id] });
    const plus = await createPlus(team.ownerKey, [REFUND, ...FILLERS]);
    const emb = await embeddingModel(team, kind);
    expect(expectStatus(await choose(team.ownerKey, emb.id), 200)).toMatchObject({ embeddingModelId: emb.id, files: { pending: 5 } });
    expect((await getPlus(team.ownerKey, plus.id)).files.map((f) => f.embedding?.status)).toEqual(['pending', 'pending', 'pending', 'pending', 'pending']);

    expect(await t.services.embeddings.runOnce()).toBe(5);
    const after = await getPlus(team.ownerKey, plus.id);
    expect(after.files.map((f) => f.embedding?.status)).toEqual(['ready', 'ready', 'ready', 'ready', 'ready']);
    expect(await settingsOf(team.ownerKey)).toMatchObject({ embeddingModelId: emb.id, dimensions: 5, files: { ready: 5, pending: 0, failed: 0 } });

    const answer = await chat(team.ownerKey, ws.id, plus.id);
    const refundFile = after.files.find((f) => f.fileChunks[0]!.fileData.startsWith('Reimbursement'))!;
    const refund = answer.sources.find((x) => x.fileId === refundFile.id);
    expect(refund, JSON.stringify(answer.sources)).toBeDefined();
    expect(refund!.ranking).toEqual({ lexical: null, vector: { score: expect.closeTo(1, 5), rank: 1 } });
    // every source carries its place in the fused list and its fused score
    const ranks = answer.sources.map((x) => x.rank);
    expect(ranks.every((r) => typeof r === 'number')).toBe(true);
    const lexicalOnes = answer.sources.filter((x) => x.ranking?.lexical);
    expect(lexicalOnes.length).toBeGreaterThan(0);
    // the fused score: full text's score over its best, plus a share of the vector one (at most HYBRID.weight)
    for (const src of answer.sources) {
      const r = src.ranking!;
      expect(src.score).toBeGreaterThanOrEqual(0);
      expect(src.score).toBeLessThanOrEqual((r.lexical ? 1 : 0) + HYBRID.weight + 1e-6);
      if (!r.lexical) expect(src.score).toBeLessThanOrEqual(HYBRID.weight + 1e-6);
    }
    expect(answer.sources.map((x) => x.score)).toEqual([...answer.sources.map((x) => x.score)].sort((a, b) => b - a));
    expect(await contextFor(team.ownerKey, plus.id, QUESTION)).toContain('Reimbursement');
    // the question is embedded with the same model as the chunks
    const models = new Set(embedRequests().map((r) => r.body.model ?? r.path));
    expect([...models].every((m) => String(m).includes(`embed-${kind.toLowerCase()}`))).toBe(true);
  });

  it('batches chunks per provider request (EMBEDDING_BATCH_SIZE)', async () => {
    const team = await newTeam(t);
    const emb = await embeddingModel(team);
    expectStatus(await choose(team.ownerKey, emb.id), 200);
    // one file of several chunks: a long text the chunker splits
    const long = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} says something about the office and its many rooms.`).join('\n\n');
    const plus = await createPlus(team.ownerKey, [long]);
    const chunkCount = plus.files[0]!.fileChunks.length;
    expect(chunkCount).toBeGreaterThan(2);
    await t.services.embeddings.runOnce();
    const reqs = embedRequests();
    expect(reqs).toHaveLength(Math.ceil(chunkCount / 2));
    expect(reqs.every((r) => r.body.input.length <= 2)).toBe(true);
    expect((await getPlus(team.ownerKey, plus.id)).files[0]!.embedding?.status).toBe('ready');
  });

  it('a failing endpoint marks files failed with a code (no provider text), and a later pass retries them', async () => {
    const team = await newTeam(t);
    const emb = await embeddingModel(team);
    expectStatus(await choose(team.ownerKey, emb.id), 200);
    const plus = await createPlus(team.ownerKey, [REFUND, FILLERS[0]!]);
    s.standIn.set({ failStatus: 500 });
    await t.services.embeddings.runOnce();
    const failed = await getPlus(team.ownerKey, plus.id);
    for (const f of failed.files) {
      expect(f.embedding).toMatchObject({ status: 'failed', attempts: 1 });
      expect(f.embedding!.error).toMatch(/^provider_error: /);
      expect(f.embedding!.error).not.toContain(LEAKED_SECRET);
    }
    // a chat turn still works, full-text only, while nothing is embedded
    s.standIn.set({ failStatus: null });
    await t.services.embeddings.runOnce();
    const recovered = await getPlus(team.ownerKey, plus.id);
    expect(recovered.files.map((f) => f.embedding)).toEqual([
      expect.objectContaining({ status: 'ready', error: null, attempts: 2 }),
      expect.objectContaining({ status: 'ready', error: null, attempts: 2 }),
    ]);
  });

  it('a question the model cannot embed falls back to full-text for that turn', async () => {
    const team = await newTeam(t);
    const chatModel = await createModel(t, team.ownerKey, s.modelBody('OPENAI'));
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [chatModel.id] });
    const emb = await embeddingModel(team, 'GOOGLE');
    expectStatus(await choose(team.ownerKey, emb.id), 200);
    const plus = await createPlus(team.ownerKey, [REFUND, ...FILLERS]);
    await t.services.embeddings.runOnce();
    s.standIn.set({ failEmbeddings: 503 });
    const answer = await chat(team.ownerKey, ws.id, plus.id);
    expect(answer.sources.length).toBeGreaterThan(0);
    // full-text only: each source's ranking names its lexical place and no vector one
    for (const src of answer.sources) expect(src.ranking).toMatchObject({ lexical: { rank: expect.any(Number) }, vector: null });
    expect(answer.sources.map((x) => x.excerpt).join(' ')).not.toContain('Reimbursement');
    expect(embedRequests().length).toBeGreaterThan(0);
    // recovered: the next question is hybrid again
    s.standIn.set({ failEmbeddings: null });
    expect(await contextFor(team.ownerKey, plus.id, `${QUESTION} Please.`)).toContain('Reimbursement');
  });

  it('a follow-up embeds its previous question with it, in one request, and searches with both', async () => {
    const team = await newTeam(t);
    const emb = await embeddingModel(team, 'OPENAI');
    expectStatus(await choose(team.ownerKey, emb.id), 200);
    const alone = await t.services.embeddings.queryVector(team.teamId, 'and on which card?');
    const before = embedRequests().length;
    const followUp = await t.services.embeddings.queryVector(team.teamId, 'and on which card?', QUESTION);
    const sent = embedRequests().slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body.input).toEqual(['and on which card?', QUESTION]);
    expect(followUp!.vector).not.toEqual(alone!.vector);
    expect(Math.hypot(...followUp!.vector)).toBeCloseTo(1, 6);
  });

  it('pgvector and the real[] fallback rank alike (the fallback is what runs where the extension is missing)', async () => {
    const team = await newTeam(t);
    const emb = await embeddingModel(team);
    expectStatus(await choose(team.ownerKey, emb.id), 200);
    const plus = await createPlus(team.ownerKey, [REFUND, ...FILLERS, 'A refund, money back, reimbursement: all of it.']);
    await t.services.embeddings.runOnce();
    const q = (await t.services.embeddings.queryVector(team.teamId, QUESTION))!;
    const scope = { teamId: team.teamId, plusIds: [plus.id], fileIds: [] };
    const plain = await vectorSearch(t.database.db, scope, q, 50, false);
    expect(plain).toHaveLength(6);
    expect(plain[0]!.text).toMatch(/^(Reimbursement|A refund)/);
    expect(plain[0]!.score).toBeCloseTo(1, 4);
    const hasVector = await t.database.vectorOps();
    // An in-memory PGlite always registers pgvector (an on-disk one from its second start: test/db/pgvector-registration.test.ts).
    if (t.database.kind === 'pglite' && !process.env.ATRIUM_TEST_EMBEDDED) expect(hasVector).toBe(true);
    if (hasVector) {
      const pgv = await vectorSearch(t.database.db, scope, q, 50, true);
      expect(pgv.map((c) => c.chunkId)).toEqual(plain.map((c) => c.chunkId));
      pgv.forEach((c, i) => expect(c.score).toBeCloseTo(plain[i]!.score, 5));
    }
  });

  it('changing the model re-embeds every file with the new one; clearing it goes back to full-text only', async () => {
    const team = await newTeam(t);
    const first = await embeddingModel(team, 'OPENAI', { baseModel: 'embed-first' });
    const second = await embeddingModel(team, 'OPENAI', { baseModel: 'embed-second' });
    expectStatus(await choose(team.ownerKey, first.id), 200);
    const plus = await createPlus(team.ownerKey, [REFUND, FILLERS[0]!, FILLERS[1]!]);
    await t.services.embeddings.runOnce();
    const vectorModels = async () => {
      const r = (await t.database.db.execute(sql`select distinct model_id from plus_chunk_vectors where plus_id = ${plus.id}::uuid`)) as unknown as {
        rows: Array<{ model_id: string }>;
      };
      return r.rows.map((x) => x.model_id);
    };
    expect(await vectorModels()).toEqual([first.id]);

    s.standIn.reset();
    expect(expectStatus(await choose(team.ownerKey, second.id), 200)).toMatchObject({ embeddingModelId: second.id, files: { pending: 3, ready: 0 } });
    expect(await vectorModels()).toEqual([]);
    expect(await t.services.embeddings.runOnce()).toBe(3);
    expect(await vectorModels()).toEqual([second.id]);
    expect(new Set(embedRequests().map((r) => r.body.model))).toEqual(new Set(['embed-second']));
    expect((await getPlus(team.ownerKey, plus.id)).files.every((f) => f.embedding?.status === 'ready')).toBe(true);

    // choosing the same model again re-embeds too (after editing the model, say)
    s.standIn.reset();
    expect(expectStatus(await choose(team.ownerKey, second.id), 200)).toMatchObject({ files: { pending: 3 } });
    expect(await t.services.embeddings.runOnce()).toBe(3);

    expect(expectStatus(await choose(team.ownerKey, null), 200)).toMatchObject({ embeddingModelId: null });
    expect(await vectorModels()).toEqual([]);
    expect((await getPlus(team.ownerKey, plus.id)).files.every((f) => f.embedding === null)).toBe(true);
  });

  it('files uploaded after the model was chosen are queued in the same transaction', async () => {
    const team = await newTeam(t);
    const emb = await embeddingModel(team);
    expectStatus(await choose(team.ownerKey, emb.id), 200);
    const plus = await createPlus(team.ownerKey, [REFUND]);
    expect(plus.files[0]!.embedding).toMatchObject({ status: 'pending', attempts: 0, error: null });
    const body = multipartBody([{ name: 'files', filename: 'more.txt', contentType: 'text/plain', data: Buffer.from(FILLERS[2]!) }]);
    const added = expectStatus(await t.api(team.ownerKey).POST('/api/v1/plus/{plusId}/add-file', { ...plusAt(plus.id), ...body }), 200);
    expect(expectShape(Plus, added).files.map((f) => f.embedding?.status)).toEqual(['pending', 'pending']);
    expect(await t.services.embeddings.runOnce()).toBe(2);
  });

  it('two claims at once never take the same file (FOR UPDATE SKIP LOCKED)', async () => {
    const team = await newTeam(t);
    const emb = await embeddingModel(team);
    expectStatus(await choose(team.ownerKey, emb.id), 200);
    await createPlus(team.ownerKey, [REFUND, ...FILLERS]);
    const repo = new EmbeddingsRepo();
    const [a, b] = await Promise.all([repo.claim(t.database.db, 3, 60_000), repo.claim(t.database.db, 3, 60_000)]);
    const ids = [...a, ...b].map((c) => c.fileId);
    expect(new Set(ids).size).toBe(ids.length);
    // what was claimed is done by the pass that claimed it; the rest by the next pass once claims expire
    await t.database.db.execute(sql`update plus_file_embeddings set claimed_until = now() - interval '1 second' where team_id = ${team.teamId}::uuid`);
    expect(await t.services.embeddings.runOnce()).toBeGreaterThanOrEqual(5);
  });
});

describe('the embedding setting and model kinds', () => {
  it('only owners/admins choose; a chat model, an unknown model or another team\u2019s model is refused', async () => {
    const team = await newTeam(t);
    const other = await newTeam(t);
    const member = await team.addUser('member');
    const chatModel = await createModel(t, team.ownerKey, s.modelBody('OPENAI'));
    const emb = await embeddingModel(team);
    const foreign = await embeddingModel(other);
    expectProblem(await choose(member.key, emb.id), 403);
    await settingsOf(member.key);
    expect(expectProblem(await choose(team.ownerKey, chatModel.id), 400)).toMatchObject({ code: 'not_an_embedding_model' });
    expect(expectProblem(await choose(team.ownerKey, foreign.id), 400)).toMatchObject({ code: 'model_not_available' });
    expectProblem(await choose(team.ownerKey, 'not-a-uuid'), 400);
    expectProblem(
      // raw: a field the document does not allow
      await t.request({ method: 'PUT', url: '/api/v1/embeddings/settings', key: team.ownerKey, payload: { embeddingModelId: emb.id, extra: 1 } }),
      400,
    );
    // the other team's choice is its own
    expectStatus(await choose(other.ownerKey, foreign.id), 200);
    expect(await settingsOf(team.ownerKey)).toMatchObject({ embeddingModelId: null });
  });

  it('an embedding model is refused for chat, and an ANTHROPIC model cannot be one', async () => {
    const team = await newTeam(t);
    const emb = await embeddingModel(team);
    expect(emb).toMatchObject({ kind: 'embedding', embeddingDimensions: null });
    expect(expectProblem(await t.api(team.ownerKey).POST('/api/v1/workspaces', { body: { name: 'w', modelIds: [emb.id] } }), 400)).toMatchObject({
      code: 'not_a_chat_model',
      errors: [{ path: 'body/modelIds/0', message: 'is an embedding or rerank model, not a chat model' }],
    });
    const chatModel = await createModel(t, team.ownerKey, s.modelBody('OPENAI'));
    expect(chatModel).toMatchObject({ kind: 'chat' });
    const ws = await createWorkspace(t, team.ownerKey, { modelIds: [chatModel.id] });
    expect(
      expectProblem(
        await t.api(team.ownerKey).POST('/api/v1/workspaces/{workspaceId}/{modelId}', { params: { path: { workspaceId: ws.id, modelId: emb.id } }, body: {} }),
        400,
      ),
    ).toMatchObject({ code: 'not_a_chat_model' });
    // a chat model turned into an embedding model is refused by the chat (before anything is stored)
    expectStatus(
      await t.api(team.ownerKey).PATCH('/api/v1/models/{modelId}', { params: { path: { modelId: chatModel.id } }, body: { kind: 'embedding' } }),
      200,
    );
    expect(expectProblem(await complete(team.ownerKey, ws.id, { prompt: 'hi' }), 400)).toMatchObject({ code: 'not_a_chat_model' });
    expect(s.standIn.requests).toHaveLength(0);
    expect(
      expectProblem(
        await t.api(team.ownerKey).POST('/api/v1/models', { body: { ...(s.modelBody('ANTHROPIC') as ModelBody), name: 'a', kind: 'embedding' } }),
        400,
      ),
    ).toMatchObject({
      errors: [{ path: 'body/kind' }],
    });
    expectProblem(
      // raw: a kind the document does not have
      await t.request({ method: 'POST', url: '/api/v1/models', key: team.ownerKey, payload: { name: 'a', ...s.modelBody('OPENAI'), kind: 'vector' } }),
      400,
    );
  });

  it('configured dimensions are asked of the provider', async () => {
    const team = await newTeam(t);
    const emb = await embeddingModel(team, 'OPENAI', { embeddingDimensions: 16 });
    expectStatus(await choose(team.ownerKey, emb.id), 200);
    await createPlus(team.ownerKey, [REFUND]);
    await t.services.embeddings.runOnce();
    expect(embedRequests()[0]!.body.dimensions).toBe(16);
    expect(await settingsOf(team.ownerKey)).toMatchObject({
      dimensions: 16,
      files: { ready: 1 },
    });
  });
});
