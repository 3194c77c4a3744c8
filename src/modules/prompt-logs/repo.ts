import { and, asc, count, desc, eq, gt, gte, lt, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { execute } from '../../db/driver.js';
import { type SearchRewrite } from '../../db/schema/chat.js';
import { promptLogs } from '../../db/schema/prompt-logs.js';
import { readablePromptLogsSql, type Viewer } from '../../policy/index.js';

/** Retention: delete the team's prompt logs created before `before`; answers how many (called by modules/retention in its transaction). */
export async function purgePromptLogs(db: Executor, teamId: string, before: Date): Promise<number> {
  const rows = await db
    .delete(promptLogs)
    .where(and(eq(promptLogs.teamId, teamId), lt(promptLogs.created, before)))
    .returning({ id: promptLogs.id });
  return rows.length;
}

export type PromptLogRow = typeof promptLogs.$inferSelect;
export type FinalStatus = 'ok' | 'error' | 'interrupted';

/** A log opened when the user's turn is stored: `pending` until the answer (or failure) is stored. */
export interface PendingLog {
  id: string;
  teamId: string;
  userId: number;
  workspaceId: string;
  /** null for a turn that keeps no thread (the OpenAI-compatible API without `store`) */
  threadId: string | null;
  modelId: string;
  modelName: string;
  prompt: string;
  created: Date;
}

export interface FinishedLog {
  response: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  latencyMs: number;
  status: FinalStatus;
  error: string | null;
  /** a follow-up searched as rewritten by the turn's model (absent: it was not) */
  rewrite?: SearchRewrite | null;
}

/**
 * SQL this module owns but other repositories embed, so that a chat turn's writes stay ONE
 * statement (a data-modifying CTE) while `prompt_logs` is written by this file only.
 */
export const promptLogSql = {
  /**
   * One VALUES row of a pending log; `key` joins it to the caller's other CTEs. `reservation`:
   * the turn's reservation as JSON text (opaque to this module; null without one).
   */
  pendingRow(key: SQL, l: PendingLog, reservation: string | null = null): SQL {
    return sql`(${key}, ${l.id}::uuid, ${l.teamId}::uuid, ${l.userId}::int, ${l.workspaceId}::uuid, ${l.threadId}::uuid, ${l.modelId}::uuid, ${l.modelName}::text, ${l.prompt}::text, ${l.created.toISOString()}::timestamptz, ${reservation}::jsonb)`;
  },
  /**
   * INSERT of the pending rows whose key is in `keep` (a subquery of keys), or of all of them when
   * `keep` is null. `reservation`: the stored reservation's expression over the row `v` (default
   * its own value), for a caller that completes it from its other CTEs.
   */
  insertPending(rows: SQL[], keep: SQL | null, reservation: SQL = sql`v.reservation`): SQL {
    return sql`insert into prompt_logs (id, team_id, user_id, workspace_id, thread_id, model_id, model_name, prompt, status, created, reservation)
      select v.id, v.team_id, v.user_id, v.workspace_id, v.thread_id, v.model_id, v.model_name, v.prompt, 'pending', v.created, ${reservation}
      from (values ${sql.join(rows, sql`, `)}) as v(key, id, team_id, user_id, workspace_id, thread_id, model_id, model_name, prompt, created, reservation)
      ${keep ? sql`where v.key in (${keep})` : sql``}`;
  },
  /**
   * UPDATE taking the reservations of the logs the stale sweep finished (a crashed node's turns),
   * each once: `returning reservation` (the value taken; RETURNING alone would give the new null).
   * The rows are locked first, so a node sweeping at the same time skips the ones taken. Every
   * other log's reservation was cleared when it ended.
   */
  takeAbandonedReservations(): SQL {
    return sql`update prompt_logs p set reservation = null
      from (select id, reservation from prompt_logs where reservation is not null and status <> 'pending' for update) a
      where p.id = a.id returning a.reservation`;
  },
  /**
   * INSERT of logs already finished: a turn written in one statement once its answer is known
   * (ChatRepo.recordWholeTurns), whose log was never pending. A row for which `lost` holds (an
   * expression over the row `v`: its thread could not be kept) ends `interrupted` with `lostReason`.
   */
  insertFinished(rows: Array<{ log: PendingLog; end: FinishedLog }>, lost: SQL, lostReason: string): SQL {
    const values = rows.map(
      ({ log: l, end: e }) =>
        sql`(${l.id}::uuid, ${l.teamId}::uuid, ${l.userId}::int, ${l.workspaceId}::uuid, ${l.threadId}::uuid, ${l.modelId}::uuid, ${l.modelName}::text, ${l.prompt}::text, ${e.status}::text, ${l.created.toISOString()}::timestamptz, ${e.response}::text, ${e.promptTokens}::int, ${e.completionTokens}::int, ${e.latencyMs}::int, ${e.error}::text, ${e.rewrite ? JSON.stringify(e.rewrite) : null}::jsonb)`,
    );
    return sql`insert into prompt_logs (id, team_id, user_id, workspace_id, thread_id, model_id, model_name, prompt, status, created, response, prompt_tokens, completion_tokens, latency_ms, error, rewrite)
      select v.id, v.team_id, v.user_id, v.workspace_id, v.thread_id, v.model_id, v.model_name, v.prompt,
        case when ${lost} then 'interrupted' else v.status end, v.created, v.response, v.pt, v.ct, v.lat,
        case when ${lost} then ${lostReason}::text else v.error end, v.rewrite
      from (values ${sql.join(values, sql`, `)}) as v(id, team_id, user_id, workspace_id, thread_id, model_id, model_name, prompt, status, created, response, pt, ct, lat, error, rewrite)`;
  },
  /** One VALUES row finishing a log; `key` joins it to the caller's other CTEs. */
  finishedRow(key: SQL, id: string, l: FinishedLog): SQL {
    return sql`(${key}, ${id}::uuid, ${l.response}::text, ${l.promptTokens}::int, ${l.completionTokens}::int, ${l.latencyMs}::int, ${l.status}::text, ${l.error}::text, ${l.rewrite ? JSON.stringify(l.rewrite) : null}::jsonb)`;
  },
  /**
   * UPDATE finishing pending logs. A row whose key is in `lost` (its answer could not be kept:
   * the thread was deleted meanwhile) ends `interrupted` with `lostReason`, whatever it says.
   */
  finish(rows: SQL[], lost: SQL, lostReason: string): SQL {
    return sql`update prompt_logs p set response = v.response, prompt_tokens = v.pt, completion_tokens = v.ct, latency_ms = v.lat, reservation = null, rewrite = v.rewrite,
        status = case when v.key in (${lost}) then 'interrupted' else v.status end,
        error = case when v.key in (${lost}) then ${lostReason}::text else v.error end
      from (values ${sql.join(rows, sql`, `)}) as v(key, id, response, pt, ct, lat, status, error, rewrite)
      where p.id = v.id and p.status = 'pending'`;
  },
};

export interface LogFilter {
  /** whose logs: the team's or only their own (policy/activity.ts) */
  reader: Viewer;
  q?: string;
  start?: Date;
  end?: Date;
}

export const SORTABLE = ['created', 'latencyMs', 'promptTokens', 'completionTokens', 'modelName', 'status', 'userId'] as const;
export type SortField = (typeof SORTABLE)[number];

const COLUMNS = {
  created: promptLogs.created,
  latencyMs: promptLogs.latencyMs,
  promptTokens: promptLogs.promptTokens,
  completionTokens: promptLogs.completionTokens,
  modelName: promptLogs.modelName,
  status: promptLogs.status,
  userId: promptLogs.userId,
} as const;

const SELECT = {
  id: promptLogs.id,
  created: promptLogs.created,
  userId: promptLogs.userId,
  workspaceId: promptLogs.workspaceId,
  threadId: promptLogs.threadId,
  modelId: promptLogs.modelId,
  modelName: promptLogs.modelName,
  prompt: promptLogs.prompt,
  response: promptLogs.response,
  promptTokens: promptLogs.promptTokens,
  completionTokens: promptLogs.completionTokens,
  latencyMs: promptLogs.latencyMs,
  status: promptLogs.status,
  error: promptLogs.error,
  rewrite: promptLogs.rewrite,
};
export type PromptLogView = { [K in keyof typeof SELECT]: PromptLogRow[K] };

export class PromptLogsRepo {
  private where(f: LogFilter): SQL {
    return and(
      readablePromptLogsSql(f.reader, promptLogs),
      f.start ? gte(promptLogs.created, f.start) : undefined,
      f.end ? lte(promptLogs.created, f.end) : undefined,
      // Word search on the indexed tsvector of prompt and response ('simple' config: no stemming, any language).
      f.q?.trim() ? sql`${promptLogs.search} @@ websearch_to_tsquery('simple', ${f.q})` : undefined,
    )!;
  }

  /** A log written already finished (none was pending); nothing when it exists already. */
  async insertFinished(db: Executor, log: PendingLog, v: FinishedLog): Promise<void> {
    await execute(db, sql`${promptLogSql.insertFinished([{ log, end: v }], sql`false`, '')} on conflict (id) do nothing`);
  }

  /** The log of a turn whose answer was never stored, written already failed with `reason` (no response, no tokens). */
  insertFailed(db: Executor, log: PendingLog, latencyMs: number, reason: string): Promise<void> {
    return this.insertFinished(db, log, { response: null, promptTokens: null, completionTokens: null, latencyMs, status: 'error', error: reason });
  }

  async finish(db: Executor, id: string, v: FinishedLog): Promise<void> {
    await db
      .update(promptLogs)
      .set({
        response: v.response,
        promptTokens: v.promptTokens,
        completionTokens: v.completionTokens,
        latencyMs: v.latencyMs,
        status: v.status,
        error: v.error,
        reservation: null,
        rewrite: v.rewrite ?? null,
      })
      .where(and(eq(promptLogs.id, id), eq(promptLogs.status, 'pending')));
  }

  /**
   * Finish every log still `pending` that was created before `before` (its request cannot still be
   * running: a crashed node, a lost write). One UPDATE, idempotent, safe to run on every node at once.
   */
  async sweepStale(db: Executor, before: Date, reason: string): Promise<number> {
    const rows = await db
      .update(promptLogs)
      .set({ status: 'interrupted', error: reason })
      .where(and(eq(promptLogs.status, 'pending'), lt(promptLogs.created, before)))
      .returning({ id: promptLogs.id });
    return rows.length;
  }

  async count(db: Executor, f: LogFilter): Promise<number> {
    const [row] = await db.select({ n: count() }).from(promptLogs).where(this.where(f));
    return row?.n ?? 0;
  }

  async list(
    db: Executor,
    f: LogFilter,
    page: { limit: number; offset: number; sort: Array<{ field: SortField; dir: 'asc' | 'desc' }> },
  ): Promise<PromptLogView[]> {
    const order = page.sort.map((s) => (s.dir === 'asc' ? asc(COLUMNS[s.field]) : desc(COLUMNS[s.field])));
    return db
      .select(SELECT)
      .from(promptLogs)
      .where(this.where(f))
      .orderBy(...(order.length ? order : [desc(promptLogs.created)]), desc(promptLogs.id))
      .limit(page.limit)
      .offset(page.offset);
  }

  /**
   * Keyset pages in (created, id) order: the CSV export reads batch after batch, never the whole
   * set. Each row's `cursor` is its `created` exactly as stored (microseconds; a Date keeps only
   * milliseconds), so the next batch starts right after it.
   */
  async listAfter(db: Executor, f: LogFilter, after: { cursor: string; id: string } | null, limit: number): Promise<Array<PromptLogView & { cursor: string }>> {
    // `created >= cursor` too: the index on (team_id, created) then starts each batch at the cursor
    // instead of scanning every earlier log again (100,000 logs took 192 s to export without it)
    const at = sql`${after?.cursor}::timestamptz`;
    const cursor = after
      ? and(gte(promptLogs.created, at), or(gt(promptLogs.created, at), and(eq(promptLogs.created, at), gt(promptLogs.id, after.id))))
      : undefined;
    return db
      .select({ ...SELECT, cursor: sql<string>`${promptLogs.created}::text` })
      .from(promptLogs)
      .where(and(this.where(f), cursor))
      .orderBy(asc(promptLogs.created), asc(promptLogs.id))
      .limit(limit);
  }
}
