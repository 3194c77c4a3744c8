/**
 * The SQL of Plus entries' evaluation sets (plus_eval_questions) and their last runs
 * (plus_eval_runs). Visibility is checked by the caller (EvaluationService) on the entry first.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { plusEvalQuestions, plusEvalRuns, storingFilesOf } from '../../db/schema/plus.js';
import { execute } from '../../db/driver.js';

export type EvalQuestionRow = typeof plusEvalQuestions.$inferSelect;
export type EvalRunRow = typeof plusEvalRuns.$inferSelect;

/** An entry as its team and id (ids are per team). */
export interface EntryKey {
  teamId: string;
  id: string;
}

/** The whitespace a passage and a chunk's text are compared without: the same characters in JavaScript and SQL. */
export const PASSAGE_SPACES = '[ \t\n\r\f\v]+';

/**
 * A passage as it is compared with chunk texts: runs of whitespace as one space, trimmed, ASCII
 * letters in lower case (what SQL's translate does alike on both databases, whatever their locale).
 */
export function normalisePassage(s: string): string {
  return s
    .replace(new RegExp(PASSAGE_SPACES, 'g'), ' ')
    .trim()
    .replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** The rows of one entry's set or run: team and id together. */
const ofEntry = (t: typeof plusEvalQuestions | typeof plusEvalRuns, entry: EntryKey) => and(eq(t.teamId, entry.teamId), eq(t.plusId, entry.id));

export class EvaluationRepo {
  async questions(db: Executor, entry: EntryKey): Promise<EvalQuestionRow[]> {
    return db
      .select()
      .from(plusEvalQuestions)
      .where(ofEntry(plusEvalQuestions, entry))
      .orderBy(asc(plusEvalQuestions.position), asc(plusEvalQuestions.created));
  }

  async question(db: Executor, entry: EntryKey, id: string): Promise<EvalQuestionRow | undefined> {
    const [row] = await db
      .select()
      .from(plusEvalQuestions)
      .where(and(ofEntry(plusEvalQuestions, entry), eq(plusEvalQuestions.id, id)));
    return row;
  }

  /** The entry's row locked until the transaction ends (adds to one set run one after another). */
  async lockEntry(tx: Executor, entry: EntryKey): Promise<void> {
    await execute(tx, sql`select 1 from plus_entries where team_id = ${entry.teamId}::uuid and id = ${entry.id}::uuid for update`);
  }

  async count(db: Executor, entry: EntryKey): Promise<number> {
    const [row] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(plusEvalQuestions)
      .where(ofEntry(plusEvalQuestions, entry));
    return Number(row?.n ?? 0);
  }

  /** The whole set replaced by `rows`, in their order. */
  async replace(tx: Executor, entry: EntryKey, rows: Array<{ id: string; question: string; passage: string }>): Promise<void> {
    await tx.delete(plusEvalQuestions).where(ofEntry(plusEvalQuestions, entry));
    if (rows.length === 0) return;
    await tx.insert(plusEvalQuestions).values(rows.map((r, i) => ({ ...r, teamId: entry.teamId, plusId: entry.id, position: i })));
  }

  /** A question added at the end of the set. */
  async add(tx: Executor, entry: EntryKey, row: { id: string; question: string; passage: string }): Promise<EvalQuestionRow> {
    const [added] = await tx
      .insert(plusEvalQuestions)
      .values({
        ...row,
        teamId: entry.teamId,
        plusId: entry.id,
        position: sql`(select coalesce(max(q.position), -1) + 1 from plus_eval_questions q where q.team_id = ${entry.teamId}::uuid and q.plus_id = ${entry.id}::uuid)`,
      })
      .returning();
    return added!;
  }

  async update(tx: Executor, entry: EntryKey, id: string, change: { question: string; passage: string }): Promise<EvalQuestionRow | undefined> {
    const [row] = await tx
      .update(plusEvalQuestions)
      .set({ ...change, updated: new Date() })
      .where(and(ofEntry(plusEvalQuestions, entry), eq(plusEvalQuestions.id, id)))
      .returning();
    return row;
  }

  async delete(tx: Executor, entry: EntryKey, id: string): Promise<boolean> {
    const rows = await tx
      .delete(plusEvalQuestions)
      .where(and(ofEntry(plusEvalQuestions, entry), eq(plusEvalQuestions.id, id)))
      .returning({ id: plusEvalQuestions.id });
    return rows.length > 0;
  }

  async lastRun(db: Executor, entry: EntryKey): Promise<EvalRunRow | undefined> {
    const [row] = await db.select().from(plusEvalRuns).where(ofEntry(plusEvalRuns, entry));
    return row;
  }

  /** The entry's run, replacing the one before. */
  async saveRun(tx: Executor, run: EvalRunRow): Promise<void> {
    await tx
      .insert(plusEvalRuns)
      .values(run)
      .onConflictDoUpdate({
        target: [plusEvalRuns.teamId, plusEvalRuns.plusId],
        set: {
          userId: run.userId,
          ran: run.ran,
          method: run.method,
          recallAt5: run.recallAt5,
          mrrAt10: run.mrrAt10,
          ndcgAt10: run.ndcgAt10,
          results: run.results,
        },
      });
  }

  /**
   * For each passage (already normalised: normalisePassage), the ids of the entry's chunks whose
   * text holds it, normalised alike — one statement, each chunk's text normalised once.
   */
  async chunksHolding(db: Executor, entry: EntryKey, passages: readonly string[]): Promise<Map<number, Set<number>>> {
    const out = new Map<number, Set<number>>(passages.map((_, i) => [i, new Set<number>()]));
    if (passages.length === 0) return out;
    const list = sql.join(
      passages.map((p) => sql`${p}`),
      sql`, `,
    );
    const res = await execute<{ i: number; id: number | string }>(
      db,
      sql`
      with c as materialized (
        select c.id, translate(regexp_replace(c.file_data_processed, ${PASSAGE_SPACES}, ' ', 'g'), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') as t
        from plus_chunks c
        where c.team_id = ${entry.teamId}::uuid and c.plus_id = ${entry.id}::uuid and c.file_id <> all(${storingFilesOf(sql`${entry.teamId}::uuid`)}))
      select (q.i - 1)::int as i, c.id
      from unnest(array[${list}]::text[]) with ordinality as q(p, i)
      join c on strpos(c.t, q.p) > 0`,
    );
    for (const r of res.rows) out.get(Number(r.i))?.add(Number(r.id));
    return out;
  }
}
