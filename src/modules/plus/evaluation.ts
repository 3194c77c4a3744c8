/**
 * An entry's evaluation set: questions with the passage that answers each, kept by the team, and
 * its run — every question ranked by the entry's own retrieval (PlusContext, as context-for-prompt
 * ranks: full text, fused with vectors when the team has an embedding model, reranked when it has
 * a rerank model), scored against the chunks holding its passage (retrieval/metrics.ts). The last
 * run is stored with its time. Reading follows the entry's visibility; changing the set and
 * running it need the right to change the entry (policy.ts). Changes and runs are audited.
 */
import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { Db } from '../../db/client.js';
import type { StoredEvalResult } from '../../db/schema/plus.js';
import { badRequest, notFound } from '../../errors.js';
import { K_MRR, scoreRanking } from '../../retrieval/metrics.js';
import { recordAudit } from '../audit/record.js';
import { mayChangePlus, requireChangePlus, type Principal } from '../../policy/index.js';
import type { PlusContext } from './context.js';
import { EvaluationRepo, normalisePassage, type EvalQuestionRow, type EvalRunRow } from './evaluation-repo.js';
import type { PlusRepo, PlusRow } from './repo.js';
import type { EvalQuestion, EvalQuestionInput, EvalRun, Evaluation } from './schema.js';

/** Questions a set may hold (the schema's limit for a whole set, and for one added at a time). */
export const MAX_EVAL_QUESTIONS = 100;

type QuestionInput = Static<typeof EvalQuestionInput>;

const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;
const clean = (q: QuestionInput) => ({ question: q.question.trim(), passage: q.passage.trim() });

export class EvaluationService {
  private readonly repo = new EvaluationRepo();

  constructor(
    private readonly db: Db,
    private readonly entries: PlusRepo,
    private readonly context: PlusContext,
  ) {}

  /** The entry, if the caller may read it (else 404, as an unknown id); with `change`, also the right to change it (else 403). */
  private async entry(caller: Principal, plusId: string, change: boolean): Promise<PlusRow> {
    const entry = await this.entries.find(this.db, caller, plusId);
    if (!entry) throw notFound('Plus entry');
    if (change) requireChangePlus(caller, entry);
    return entry;
  }

  async get(caller: Principal, plusId: string): Promise<Static<typeof Evaluation>> {
    const entry = await this.entry(caller, plusId, false);
    const [questions, run] = await Promise.all([this.repo.questions(this.db, entry), this.repo.lastRun(this.db, entry)]);
    return { questions: questions.map(questionView), lastRun: run ? runView(run) : null, canEdit: mayChangePlus(caller, entry) };
  }

  /** Replace the whole set. */
  async replace(caller: Principal, plusId: string, questions: QuestionInput[]): Promise<Static<typeof Evaluation>> {
    const entry = await this.entry(caller, plusId, true);
    await this.db.transaction(async (tx) => {
      await this.repo.replace(
        tx,
        entry,
        questions.map((q) => ({ id: randomUUID(), ...clean(q) })),
      );
      await recordAudit(tx, {
        action: 'plus.evaluation_update',
        actor: caller,
        target: { type: 'plus', id: plusId },
        details: { change: 'replace', questions: questions.length },
      });
    });
    return this.get(caller, plusId);
  }

  async add(caller: Principal, plusId: string, q: QuestionInput): Promise<Static<typeof EvalQuestion>> {
    const entry = await this.entry(caller, plusId, true);
    const row = await this.db.transaction(async (tx) => {
      // the entry's row locked: two adds at once cannot both pass the limit or take one position
      await this.repo.lockEntry(tx, entry);
      if ((await this.repo.count(tx, entry)) >= MAX_EVAL_QUESTIONS)
        throw badRequest('evaluation_full', `An evaluation set holds at most ${MAX_EVAL_QUESTIONS} questions`, [
          { path: 'body', message: `the set already has ${MAX_EVAL_QUESTIONS} questions` },
        ]);
      const added = await this.repo.add(tx, entry, { id: randomUUID(), ...clean(q) });
      await recordAudit(tx, {
        action: 'plus.evaluation_update',
        actor: caller,
        target: { type: 'plus', id: plusId },
        details: { change: 'add', questionId: added.id },
      });
      return added;
    });
    return questionView(row);
  }

  async update(caller: Principal, plusId: string, questionId: string, q: QuestionInput): Promise<Static<typeof EvalQuestion>> {
    const entry = await this.entry(caller, plusId, true);
    const row = await this.db.transaction(async (tx) => {
      const updated = await this.repo.update(tx, entry, questionId, clean(q));
      if (!updated) throw notFound('Evaluation question');
      await recordAudit(tx, { action: 'plus.evaluation_update', actor: caller, target: { type: 'plus', id: plusId }, details: { change: 'edit', questionId } });
      return updated;
    });
    return questionView(row);
  }

  async delete(caller: Principal, plusId: string, questionId: string): Promise<void> {
    const entry = await this.entry(caller, plusId, true);
    await this.db.transaction(async (tx) => {
      if (!(await this.repo.delete(tx, entry, questionId))) throw notFound('Evaluation question');
      await recordAudit(tx, {
        action: 'plus.evaluation_update',
        actor: caller,
        target: { type: 'plus', id: plusId },
        details: { change: 'delete', questionId },
      });
    });
  }

  /**
   * Rank every question as context-for-prompt would and score where its passage came; the run
   * replaces the entry's last one. A set without questions cannot run (400).
   */
  async run(caller: Principal, plusId: string): Promise<Static<typeof EvalRun>> {
    const entry = await this.entry(caller, plusId, true);
    const questions = await this.repo.questions(this.db, entry);
    if (questions.length === 0) throw badRequest('evaluation_empty', 'Add a question with its passage before running the evaluation set');
    const holding = await this.repo.chunksHolding(
      this.db,
      entry,
      questions.map((q) => normalisePassage(q.passage)),
    );
    const methods = new Set<string>();
    const results: StoredEvalResult[] = [];
    for (const [i, q] of questions.entries()) {
      const { method, chunks } = await this.context.topChunks(caller, plusId, q.question, K_MRR);
      methods.add(method);
      const relevant = holding.get(i)!;
      const s = scoreRanking(
        chunks.map((c) => c.chunkId),
        relevant,
      );
      results.push({
        questionId: q.id,
        question: q.question,
        passage: q.passage,
        rank: s.first > 0 ? s.first : null,
        matchingChunks: relevant.size,
        recallAt5: s.recall,
        reciprocalRankAt10: round4(s.rr),
        ndcgAt10: round4(s.ndcg),
      });
    }
    const mean = (f: (r: StoredEvalResult) => number) => round4(results.reduce((t, r) => t + f(r), 0) / results.length);
    const run: EvalRunRow = {
      teamId: entry.teamId,
      plusId,
      userId: caller.userId,
      ran: new Date(),
      method: methods.has('hybrid') ? 'hybrid' : 'lexical',
      recallAt5: mean((r) => r.recallAt5),
      mrrAt10: mean((r) => r.reciprocalRankAt10),
      ndcgAt10: mean((r) => r.ndcgAt10),
      results,
    };
    await this.db.transaction(async (tx) => {
      await this.repo.saveRun(tx, run);
      await recordAudit(tx, {
        action: 'plus.evaluation_run',
        actor: caller,
        target: { type: 'plus', id: plusId },
        details: { questions: results.length, foundInTop5: results.filter((r) => r.recallAt5 === 1).length, method: run.method },
      });
    });
    return runView(run);
  }
}

function questionView(q: EvalQuestionRow): Static<typeof EvalQuestion> {
  return { id: q.id, question: q.question, passage: q.passage, created: q.created.toISOString(), updated: q.updated.toISOString() };
}

function runView(r: EvalRunRow): Static<typeof EvalRun> {
  return {
    ran: r.ran.toISOString(),
    userId: r.userId,
    method: r.method === 'hybrid' ? 'hybrid' : 'lexical',
    questions: r.results.length,
    foundInTop5: r.results.filter((x) => x.recallAt5 === 1).length,
    recallAt5: r.recallAt5,
    mrrAt10: r.mrrAt10,
    ndcgAt10: r.ndcgAt10,
    results: r.results,
  };
}
