/**
 * A Plus entry's evaluation set: questions with their passages, the run with the entry's own
 * retrieval (full text; hybrid with an embedding model) and its figures, the entry's visibility
 * on every route, bad input, audit entries.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEntry } from '../../src/modules/audit/schema.js';
import { EvalQuestion, EvalRun, Evaluation, Plus } from '../../src/modules/plus/schema.js';
import { expectProblem, newTeam, startTestApp, type TestApp } from '../helpers/app.js';
import { createModel } from '../helpers/factories.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { expectShape } from '../helpers/shape.js';
import { useStandIn } from '../support/use-standin.js';

const s = useStandIn();
let t: TestApp;
beforeAll(async () => {
  // the embedding worker runs only when a test calls runOnce: nothing is timed
  t = await startTestApp({ embeddings: { workerIntervalMs: 0, batchSize: 8, retryBaseMs: 0, retryMaxMs: 0, claimMs: 60_000 } });
});
afterAll(() => t.close());

const REFUND = 'Reimbursement is granted within thirty days of delivery, on the original card.';
const DOCS = [
  REFUND,
  'The parking garage is at the back of the building; its gate opens with the staff badge.',
  'Order forms are kept in the back office next to the printer.',
  'Money for the coffee fund is collected every month by the office manager.',
  'Get the plants watered on Fridays; the rota is on the wall of the kitchen.',
];

async function createPlus(key: string, isPublic: boolean, texts = DOCS) {
  const res = await t
    .api(key)
    .POST(
      '/api/v1/plus',
      multipartBody([
        { name: 'title', value: 'Office handbook' },
        { name: 'isPublic', value: String(isPublic) },
        ...texts.map((text, i) => ({ name: 'files', filename: `doc-${i}.txt`, contentType: 'text/plain', data: Buffer.from(text) })),
      ]),
    );
  return expectShape(Plus, expectStatus(res, 200));
}

type Question = { question: string; passage: string };
const at = (plusId: string) => ({ params: { path: { plusId } } });
const atQuestion = (plusId: string, questionId: string) => ({ params: { path: { plusId, questionId } } });
const put = (key: string, plusId: string, questions: Question[]) => t.api(key).PUT('/api/v1/plus/{plusId}/evaluation', { ...at(plusId), body: { questions } });
const run = (key: string, plusId: string) => t.api(key).POST('/api/v1/plus/{plusId}/evaluation/run', at(plusId));
const get = (key: string, plusId: string) => t.api(key).GET('/api/v1/plus/{plusId}/evaluation', at(plusId));
const addQuestion = (key: string, plusId: string, body: Question) => t.api(key).POST('/api/v1/plus/{plusId}/evaluation/questions', { ...at(plusId), body });
const editQuestion = (key: string, plusId: string, questionId: string, body: Question) =>
  t.api(key).PUT('/api/v1/plus/{plusId}/evaluation/questions/{questionId}', { ...atQuestion(plusId, questionId), body });
const deleteQuestion = (key: string, plusId: string, questionId: string) =>
  t.api(key).DELETE('/api/v1/plus/{plusId}/evaluation/questions/{questionId}', atQuestion(plusId, questionId));

const SET = [
  // full text finds it: "reimbursed" and "reimbursement" share their stem
  { question: 'Within how many days am I reimbursed?', passage: 'reimbursement is  granted\nwithin THIRTY days' },
  // no word in common with the passage: full text cannot find it
  { question: 'How do I get my money back for an order?', passage: REFUND },
  // quoted from no document of the entry
  { question: 'Where is the gym?', passage: 'The gym is on the roof.' },
];

describe('Plus evaluation set: questions and runs', () => {
  it('keeps the set, runs it with full text, scores where each passage came, and shows the last run', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey, true);

    const empty = expectShape(Evaluation, expectStatus(await get(team.ownerKey, plus.id), 200));
    expect(empty).toEqual({ questions: [], lastRun: null, canEdit: true });
    expect(expectProblem(await run(team.ownerKey, plus.id), 400).code).toBe('evaluation_empty');

    const set = expectShape(Evaluation, expectStatus(await put(team.ownerKey, plus.id, SET), 200));
    expect(set.questions.map((q) => q.question)).toEqual(SET.map((q) => q.question));
    expect(set.lastRun).toBeNull();

    const r = expectShape(EvalRun, expectStatus(await run(team.ownerKey, plus.id), 200));
    expect(r.method).toBe('lexical');
    expect(r.questions).toBe(3);
    expect(r.results.map((x) => [x.questionId, x.rank, x.matchingChunks])).toEqual([
      [set.questions[0]!.id, 1, 1],
      [set.questions[1]!.id, null, 1],
      [set.questions[2]!.id, null, 0],
    ]);
    expect(r.foundInTop5).toBe(1);
    expect(r.recallAt5).toBeCloseTo(1 / 3, 4);
    expect(r.mrrAt10).toBeCloseTo(1 / 3, 4);
    expect(r.ndcgAt10).toBeCloseTo(1 / 3, 4);
    expect(r.results[0]).toMatchObject({ recallAt5: 1, reciprocalRankAt10: 1, ndcgAt10: 1 });

    // the last run is kept with its time and shown with the set
    const after = expectShape(Evaluation, (await get(team.ownerKey, plus.id)).data);
    expect(after.lastRun).toEqual(r);
    expect(Date.parse(after.lastRun!.ran)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('finds the passage again after the document is ingested anew (new chunk ids)', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey, false);
    await put(team.ownerKey, plus.id, [SET[0]!]);
    const before = expectShape(EvalRun, (await run(team.ownerKey, plus.id)).data);
    expect(before.results[0]!.rank).toBe(1);

    const refundFile = plus.files.find((f) => f.fileChunks[0]!.fileData.startsWith('Reimbursement'))!;
    expect((await t.api(team.ownerKey).DELETE('/api/v1/plus/file/{fileId}', { params: { path: { fileId: refundFile.id } } })).response.status).toBe(200);
    const gone = expectShape(EvalRun, (await run(team.ownerKey, plus.id)).data);
    expect(gone.results[0]).toMatchObject({ rank: null, matchingChunks: 0 });

    const body = multipartBody([{ name: 'files', filename: 'refunds.txt', contentType: 'text/plain', data: Buffer.from(`Refunds\n\n${REFUND}`) }]);
    expect((await t.api(team.ownerKey).POST('/api/v1/plus/{plusId}/add-file', { ...at(plus.id), ...body })).response.status).toBe(200);
    const again = expectShape(EvalRun, (await run(team.ownerKey, plus.id)).data);
    expect(again.results[0]).toMatchObject({ rank: 1, matchingChunks: 1 });
  });

  it('adds, edits and removes single questions, in order', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey, true);
    const add = async (question: string, passage: string) => {
      return expectShape(EvalQuestion, expectStatus(await addQuestion(team.ownerKey, plus.id, { question, passage }), 201));
    };
    const a = await add('Where do I park?', 'The parking garage is at the back');
    const b = await add('  Who collects the coffee money?  ', 'collected every month');
    expect(b.question).toBe('Who collects the coffee money?');

    const edited = await editQuestion(team.ownerKey, plus.id, a.id, {
      question: 'Where is the parking garage?',
      passage: 'its gate opens with the staff badge',
    });
    expect(expectShape(EvalQuestion, expectStatus(edited, 200))).toMatchObject({ id: a.id, question: 'Where is the parking garage?' });

    let set = expectShape(Evaluation, (await get(team.ownerKey, plus.id)).data);
    expect(set.questions.map((q) => q.id)).toEqual([a.id, b.id]);

    expect((await deleteQuestion(team.ownerKey, plus.id, a.id)).data).toEqual({ deleted: true });
    expectProblem(await deleteQuestion(team.ownerKey, plus.id, a.id), 404);
    set = expectShape(Evaluation, (await get(team.ownerKey, plus.id)).data);
    expect(set.questions.map((q) => q.id)).toEqual([b.id]);

    // a question of another entry is not this entry's
    const other = await createPlus(team.ownerKey, true);
    expectProblem(await editQuestion(team.ownerKey, other.id, b.id, { question: 'x', passage: 'y' }), 404);
    expectProblem(await deleteQuestion(team.ownerKey, other.id, b.id), 404);

    // deleting the entry deletes its set and its run
    await run(team.ownerKey, plus.id);
    expect((await t.api(team.ownerKey).DELETE('/api/v1/plus/{plusId}', at(plus.id))).response.status).toBe(200);
    const left = (await t.database.db.execute(
      sql`select (select count(*) from plus_eval_questions where plus_id = ${plus.id}::uuid)::int as q, (select count(*) from plus_eval_runs where plus_id = ${plus.id}::uuid)::int as r`,
    )) as unknown as { rows: Array<{ q: number; r: number }> };
    expect(left.rows[0]).toEqual({ q: 0, r: 0 });
  });

  it('ranks with hybrid retrieval when the team has an embedding model: the paraphrased question finds its passage', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey, true);
    await put(team.ownerKey, plus.id, [SET[1]!]);
    const lexical = expectShape(EvalRun, (await run(team.ownerKey, plus.id)).data);
    expect(lexical).toMatchObject({ method: 'lexical', foundInTop5: 0 });

    const emb = await createModel(t, team.ownerKey, { ...s.modelBody('OPENAI', { baseModel: 'embed-openai' }), kind: 'embedding' });
    expectStatus(await t.api(team.ownerKey).PUT('/api/v1/embeddings/settings', { body: { embeddingModelId: emb.id } }), 200);
    expect(await t.services.embeddings.runOnce()).toBe(DOCS.length);

    const hybrid = expectShape(EvalRun, (await run(team.ownerKey, plus.id)).data);
    expect(hybrid).toMatchObject({ method: 'hybrid', foundInTop5: 1, recallAt5: 1 });
    expect(hybrid.results[0]!.rank).toBeLessThanOrEqual(5);
  });
});

describe('Plus evaluation set: who may read and change it', () => {
  it("a private entry's set: its creator and admins only; another member gets 404 as for an unknown id, on every route", async () => {
    const team = await newTeam(t);
    const author = await team.addUser('member');
    const other = await team.addUser('member');
    const admin = await team.addUser('admin');
    const plus = await createPlus(author.key, false);
    expect((await put(author.key, plus.id, [SET[0]!])).response.status).toBe(200);
    const qid = expectShape(Evaluation, (await get(author.key, plus.id)).data).questions[0]!.id;

    const unknown = randomUUID();
    const tries = (id: string) => [
      () => get(other.key, id),
      () => put(other.key, id, [SET[0]!]),
      () => run(other.key, id),
      () => addQuestion(other.key, id, SET[0]!),
      () => editQuestion(other.key, id, qid, SET[0]!),
      () => deleteQuestion(other.key, id, qid),
    ];
    const hidden = await Promise.all(tries(plus.id).map((f) => f()));
    const missing = await Promise.all(tries(unknown).map((f) => f()));
    for (const [i, res] of hidden.entries()) {
      const a = expectProblem(res, 404);
      const b = expectProblem(missing[i]!, 404);
      expect({ ...a, instance: undefined }).toEqual({ ...b, instance: undefined });
    }
    // nothing changed
    expect(expectShape(Evaluation, (await get(author.key, plus.id)).data).questions.map((q) => q.id)).toEqual([qid]);

    // a team admin reads and changes it
    const seen = expectShape(Evaluation, (await get(admin.key, plus.id)).data);
    expect(seen.canEdit).toBe(true);
    expect((await run(admin.key, plus.id)).response.status).toBe(200);
  });

  it("a public entry's set: every member reads it; only its creator or an admin changes or runs it (403)", async () => {
    const team = await newTeam(t);
    const author = await team.addUser('member');
    const reader = await team.addUser('member');
    const plus = await createPlus(author.key, true);
    await put(author.key, plus.id, [SET[0]!]);
    const seen = expectShape(Evaluation, (await get(reader.key, plus.id)).data);
    expect(seen.canEdit).toBe(false);
    const qid = seen.questions[0]!.id;
    expectProblem(await put(reader.key, plus.id, []), 403);
    expectProblem(await run(reader.key, plus.id), 403);
    expectProblem(await addQuestion(reader.key, plus.id, SET[0]!), 403);
    expectProblem(await editQuestion(reader.key, plus.id, qid, SET[1]!), 403);
    expectProblem(await deleteQuestion(reader.key, plus.id, qid), 403);
    expect(expectShape(Evaluation, (await get(author.key, plus.id)).data).questions).toHaveLength(1);
  });

  it("another team's entry, public or not, is not found, and its set stays as it was", async () => {
    const a = await newTeam(t);
    const b = await newTeam(t);
    const plus = await createPlus(a.ownerKey, true);
    await put(a.ownerKey, plus.id, [SET[0]!]);
    const qid = expectShape(Evaluation, (await get(a.ownerKey, plus.id)).data).questions[0]!.id;
    expectProblem(await get(b.ownerKey, plus.id), 404);
    expectProblem(await put(b.ownerKey, plus.id, []), 404);
    expectProblem(await run(b.ownerKey, plus.id), 404);
    expectProblem(await addQuestion(b.ownerKey, plus.id, SET[0]!), 404);
    expectProblem(await deleteQuestion(b.ownerKey, plus.id, qid), 404);
    const kept = expectShape(Evaluation, (await get(a.ownerKey, plus.id)).data);
    expect(kept.questions.map((q) => q.id)).toEqual([qid]);
    expect(kept.lastRun).toBeNull();
    expectProblem(await get('', plus.id), 401);
  });
});

describe('Plus evaluation set: bad input and audit', () => {
  it('answers 400 for bad input and stores nothing', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey, true);
    const evaluation = `/api/v1/plus/${plus.id}/evaluation`;
    // raw: bodies the document does not allow (a missing passage, an unknown field, not a list, broken JSON, a number)
    const putRaw = (payload: object) => t.request({ method: 'PUT', url: evaluation, key: team.ownerKey, payload });
    const bad = [
      () => putRaw({ questions: [{ question: 'No passage?' }] }),
      () => put(team.ownerKey, plus.id, [{ question: '   ', passage: 'blank question' }]),
      () => putRaw({ questions: [{ question: 'q', passage: 'p', rank: 1 }] }),
      () => put(team.ownerKey, plus.id, [{ question: 'q', passage: 'x'.repeat(4_001) }]),
      () =>
        put(
          team.ownerKey,
          plus.id,
          Array.from({ length: 101 }, (_, i) => ({ question: `q${i}`, passage: 'p' })),
        ),
      () => putRaw({ questions: 'not a list' }),
      // raw: see above
      () => t.request({ method: 'PUT', url: evaluation, key: team.ownerKey, payload: '{"questions": [', headers: { 'content-type': 'application/json' } }),
      // raw: see above
      () => t.request({ method: 'POST', url: `${evaluation}/questions`, key: team.ownerKey, payload: { question: 1, passage: 'p' } }),
      () => editQuestion(team.ownerKey, plus.id, 'not-a-uuid', { question: 'q', passage: 'p' }),
      () => get(team.ownerKey, 'not-a-uuid'),
      () => run(team.ownerKey, plus.id),
    ];
    for (const f of bad) expectProblem(await f(), 400);
    expect(expectShape(Evaluation, (await get(team.ownerKey, plus.id)).data)).toMatchObject({ questions: [], lastRun: null });
  });

  it('records changes and runs in the audit log, without the questions or passages', async () => {
    const team = await newTeam(t);
    const plus = await createPlus(team.ownerKey, true);
    await put(team.ownerKey, plus.id, SET);
    const added = expectShape(EvalQuestion, (await addQuestion(team.ownerKey, plus.id, { question: 'Secret question', passage: 'Secret passage' })).data);
    await deleteQuestion(team.ownerKey, plus.id, added.id);
    await run(team.ownerKey, plus.id);
    const log = expectStatus(await t.api(team.ownerKey).GET('/api/v1/audit', { params: { query: { size: 100, actorId: team.ownerId } } }), 200);
    const entries = (log.content as unknown[]).map((e) => expectShape(AuditEntry, e)).filter((e) => e.action.startsWith('plus.evaluation'));
    expect(entries.map((e) => [e.action, e.target, e.details]).reverse()).toEqual([
      ['plus.evaluation_update', { type: 'plus', id: plus.id }, { change: 'replace', questions: 3 }],
      ['plus.evaluation_update', { type: 'plus', id: plus.id }, { change: 'add', questionId: added.id }],
      ['plus.evaluation_update', { type: 'plus', id: plus.id }, { change: 'delete', questionId: added.id }],
      ['plus.evaluation_run', { type: 'plus', id: plus.id }, { questions: 3, foundInTop5: 1, method: 'lexical' }],
    ]);
    expect(JSON.stringify(log)).not.toContain('Secret');
    expect(JSON.stringify(log)).not.toContain('thirty days');
  });
});
