import { and, asc, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { chatMessages, chatThreads, type StoredSource, type StoredUsage } from '../../db/schema.js';

export type ThreadRow = typeof chatThreads.$inferSelect;
export type MessageRow = typeof chatMessages.$inferSelect;
export type MessageInsert = typeof chatMessages.$inferInsert;
export type ThreadWithCount = ThreadRow & { messageCount: number };

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

  async threadExists(db: Executor, id: string): Promise<boolean> {
    const [row] = await db.select({ id: chatThreads.id }).from(chatThreads).where(eq(chatThreads.id, id));
    return row !== undefined;
  }

  async insertThread(db: Executor, v: typeof chatThreads.$inferInsert): Promise<ThreadRow> {
    const [row] = await db.insert(chatThreads).values(v).returning();
    return row!;
  }

  async touchThread(db: Executor, id: string): Promise<void> {
    await db.update(chatThreads).set({ updated: new Date() }).where(eq(chatThreads.id, id));
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

  async insertMessages(db: Executor, rows: MessageInsert[]): Promise<void> {
    if (rows.length > 0) await db.insert(chatMessages).values(rows);
  }

  async countMessages(db: Executor, threadId: string): Promise<number> {
    const [row] = await db.select({ n: count() }).from(chatMessages).where(eq(chatMessages.threadId, threadId));
    return row?.n ?? 0;
  }
}

export type { StoredSource, StoredUsage };
