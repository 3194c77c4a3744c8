import { and, asc, count, desc, eq, gt, gte, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { promptLogs } from '../../db/schema.js';

export type PromptLogRow = typeof promptLogs.$inferSelect;
export type PromptLogInsert = typeof promptLogs.$inferInsert;

export interface LogFilter {
  teamId: string;
  /** members see only their own */
  userId?: number;
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
};
export type PromptLogView = { [K in keyof typeof SELECT]: PromptLogRow[K] };

export class PromptLogsRepo {
  private where(f: LogFilter): SQL {
    return and(
      eq(promptLogs.teamId, f.teamId),
      f.userId !== undefined ? eq(promptLogs.userId, f.userId) : undefined,
      f.start ? gte(promptLogs.created, f.start) : undefined,
      f.end ? lte(promptLogs.created, f.end) : undefined,
      // Word search on the indexed tsvector of prompt and response ('simple' config: no stemming, any language).
      f.q?.trim() ? sql`${promptLogs.search} @@ websearch_to_tsquery('simple', ${f.q})` : undefined,
    )!;
  }

  async insert(db: Executor, v: PromptLogInsert): Promise<void> {
    await db.insert(promptLogs).values(v);
  }

  async finish(db: Executor, id: string, v: Partial<PromptLogInsert>): Promise<void> {
    await db.update(promptLogs).set(v).where(eq(promptLogs.id, id));
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

  /** Keyset pages in (created, id) order: the CSV export reads batch after batch, never the whole set. */
  async listAfter(db: Executor, f: LogFilter, after: { created: Date; id: string } | null, limit: number): Promise<PromptLogView[]> {
    const cursor = after
      ? or(gt(promptLogs.created, after.created), and(eq(promptLogs.created, after.created), gt(promptLogs.id, after.id)))
      : undefined;
    return db
      .select(SELECT)
      .from(promptLogs)
      .where(and(this.where(f), cursor))
      .orderBy(asc(promptLogs.created), asc(promptLogs.id))
      .limit(limit);
  }

}
