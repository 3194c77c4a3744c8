import { and, asc, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { chatMessages, chatThreads, type StoredSource, type StoredUsage } from '../../db/schema.js';

export type ThreadRow = typeof chatThreads.$inferSelect;
export type MessageRow = typeof chatMessages.$inferSelect;
export type ThreadWithCount = ThreadRow & { messageCount: number };

export interface UserTurnRecord {
  thread: { id: string; teamId: string; workspaceId: string; userId: number; title: string };
  messages: Array<{ id: string; role: string; content: string; created: Date }>;
  log: { id: string; modelId: string; modelName: string; prompt: string };
  now: Date;
}

export interface AnswerRecord {
  threadId: string;
  message: { id: string; content: string; modelId: string; usage: StoredUsage; sources: StoredSource[]; status: 'ok' | 'interrupted' } | null;
  log: { id: string; response: string; promptTokens: number; completionTokens: number; latencyMs: number; status: 'ok' | 'interrupted' | 'error'; error: string | null };
  now: Date;
}

/** Which threads of a workspace a user sees (CONTRACT §3 chatHistoryType). */
export interface ThreadScope {
  workspaceId: string;
  /** set when the workspace's history is per user */
  onlyUserId?: number;
}

export class ChatRepo {
  private scope(s: ThreadScope): SQL {
    return and(eq(chatThreads.workspaceId, s.workspaceId), s.onlyUserId !== undefined ? eq(chatThreads.userId, s.onlyUserId) : undefined)!;
  }

  private readonly messageCount = sql<number>`(select count(*)::int from chat_messages m where m.thread_id = "chat_threads"."id")`;

  async listThreads(db: Executor, s: ThreadScope): Promise<ThreadWithCount[]> {
    const rows = await db
      .select({ t: chatThreads, messageCount: this.messageCount })
      .from(chatThreads)
      .where(this.scope(s))
      .orderBy(desc(chatThreads.updated), desc(chatThreads.id));
    return rows.map((r) => ({ ...r.t, messageCount: r.messageCount }));
  }

  async findThread(db: Executor, s: ThreadScope, id: string): Promise<ThreadWithCount | undefined> {
    const [row] = await db
      .select({ t: chatThreads, messageCount: this.messageCount })
      .from(chatThreads)
      .where(and(eq(chatThreads.id, id), this.scope(s)));
    return row ? { ...row.t, messageCount: row.messageCount } : undefined;
  }

  async findThreadInTeam(db: Executor, teamId: string, id: string): Promise<ThreadRow | undefined> {
    const [row] = await db.select().from(chatThreads).where(and(eq(chatThreads.id, id), eq(chatThreads.teamId, teamId)));
    return row;
  }

  async insertThread(db: Executor, v: typeof chatThreads.$inferInsert): Promise<ThreadRow> {
    const [row] = await db.insert(chatThreads).values(v).returning();
    return row!;
  }

  async renameThread(db: Executor, id: string, title: string): Promise<void> {
    await db.update(chatThreads).set({ title, updated: new Date() }).where(eq(chatThreads.id, id));
  }

  async deleteThreads(db: Executor, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const rows = await db.delete(chatThreads).where(inArray(chatThreads.id, ids)).returning({ id: chatThreads.id });
    return rows.length;
  }

  async messages(db: Executor, threadId: string): Promise<MessageRow[]> {
    return db.select().from(chatMessages).where(eq(chatMessages.threadId, threadId)).orderBy(asc(chatMessages.seq));
  }

  /** The most recent messages of a thread, newest first, for building a prompt within a budget. */
  async recentMessages(db: Executor, threadId: string, limit: number): Promise<MessageRow[]> {
    return db
      .select()
      .from(chatMessages)
      .where(and(eq(chatMessages.threadId, threadId), sql`${chatMessages.status} <> 'error'`))
      .orderBy(desc(chatMessages.seq))
      .limit(limit);
  }

  /**
   * The user's side of one or more turns in ONE statement (atomic without an explicit
   * transaction): each thread (created, or its `updated` bumped), the new message(s) and the
   * pending prompt log. Several turns share the statement under group commit (db/group-commit.ts).
   */
  async recordUserTurns(db: Executor, turns: UserTurnRecord[]): Promise<void> {
    // One row per thread: ON CONFLICT DO UPDATE may not touch a row twice in one statement.
    const threads = [...new Map(turns.map((v) => [v.thread.id, v])).values()].map((v) => {
      const t = v.thread;
      const now = v.now.toISOString();
      return sql`(${t.id}::uuid, ${t.teamId}::uuid, ${t.workspaceId}::uuid, ${t.userId}::int, ${t.title}::text, ${now}::timestamptz, ${now}::timestamptz)`;
    });
    const messages = turns.flatMap((v) =>
      v.messages.map((m) => sql`(${m.id}::uuid, ${v.thread.id}::uuid, ${m.role}::text, ${m.content}::text, ${m.created.toISOString()}::timestamptz)`),
    );
    const logs = turns.map((v) => {
      const t = v.thread;
      return sql`(${v.log.id}::uuid, ${t.teamId}::uuid, ${t.userId}::int, ${t.workspaceId}::uuid, ${t.id}::uuid, ${v.log.modelId}::uuid, ${v.log.modelName}::text, ${v.log.prompt}::text, 'pending', ${v.now.toISOString()}::timestamptz)`;
    });
    await db.execute(sql`
      with t as (
        insert into chat_threads (id, team_id, workspace_id, user_id, title, created, updated)
        values ${sql.join(threads, sql`, `)}
        on conflict (id) do update set updated = excluded.updated
      ), m as (
        insert into chat_messages (id, thread_id, role, content, created) values ${sql.join(messages, sql`, `)}
      )
      insert into prompt_logs (id, team_id, user_id, workspace_id, thread_id, model_id, model_name, prompt, status, created)
      values ${sql.join(logs, sql`, `)}`);
  }

  /** The answers of one or more turns in ONE statement: the assistant messages (if any) and the finished logs. */
  async recordAnswers(db: Executor, answers: AnswerRecord[]): Promise<void> {
    const messages = answers.flatMap((v) => {
      const m = v.message;
      if (!m) return [];
      return [
        sql`(${m.id}::uuid, ${v.threadId}::uuid, 'assistant', ${m.content}::text, ${m.modelId}::uuid, ${JSON.stringify(m.usage)}::jsonb, ${JSON.stringify(m.sources)}::jsonb, ${m.status}::text, ${v.now.toISOString()}::timestamptz)`,
      ];
    });
    const logs = answers.map(({ log: l }) => sql`(${l.id}::uuid, ${l.response}::text, ${l.promptTokens}::int, ${l.completionTokens}::int, ${l.latencyMs}::int, ${l.status}::text, ${l.error}::text)`);
    const insertMessages =
      messages.length > 0
        ? sql`with m as (
            insert into chat_messages (id, thread_id, role, content, model_id, usage, sources, status, created)
            values ${sql.join(messages, sql`, `)}
          ) `
        : sql``;
    await db.execute(sql`${insertMessages}
      update prompt_logs p set response = v.response, prompt_tokens = v.pt, completion_tokens = v.ct, latency_ms = v.lat, status = v.status, error = v.error
      from (values ${sql.join(logs, sql`, `)}) as v(id, response, pt, ct, lat, status, error)
      where p.id = v.id`);
  }

}

export type { StoredSource, StoredUsage };
