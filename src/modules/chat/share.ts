/**
 * Shared threads (docs/API.md, "Sharing a thread"; decisions in docs/DECISIONS.md, "Shared
 * threads"): a read-only link to a thread as it was when shared, opened without signing in.
 * - The link's token is 256 random bits, stored as is: it only unlocks what the database already
 *   holds, and kept readable it can be shown again in the Share dialog.
 * - A share is a snapshot: the thread's active leaf and title when shared. Messages are never
 *   changed once written, so the path to that leaf is the thread as it was; sharing again moves the
 *   snapshot to the thread as it is now, under the same link.
 * - Everything is read from the database on every request (nothing cached per node): revoking,
 *   deleting the thread, or the team turning sharing off answers 404 at once on every node.
 * - A viewer is nobody in particular: sources show only their file names, and only for entries the
 *   whole team reads (public ones); never excerpts.
 */
import { randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../db/client.js';
import { chatShares, chatTeamSettings, type StoredSource } from '../../db/schema/chat.js';
import { AppError, badRequest, notFound } from '../../errors.js';
import { recordAudit } from '../audit/record.js';
import type { PlusService } from '../plus/service.js';
import { requireTeamAdmin, type Principal } from '../../policy/index.js';
import type { ChatService } from './service.js';
import { VersionsRepo } from './versions.js';

export interface ShareRow {
  threadId: string;
  token: string;
  teamId: string;
  leafMessageId: string;
  title: string;
  created: Date;
}

/** Shares and the team's sharing setting: this module's SQL for the two tables. */
class ShareRepo {
  async find(db: Executor, threadId: string): Promise<ShareRow | undefined> {
    const [row] = await db.select().from(chatShares).where(eq(chatShares.threadId, threadId));
    return row;
  }

  /** A share by its token while its team allows sharing (a team without settings does). */
  async findLive(db: Executor, token: string): Promise<ShareRow | undefined> {
    const [row] = await db
      .select({ share: chatShares })
      .from(chatShares)
      .leftJoin(chatTeamSettings, eq(chatTeamSettings.teamId, chatShares.teamId))
      .where(and(eq(chatShares.token, token), sql`coalesce(${chatTeamSettings.sharing}, true)`));
    return row?.share;
  }

  /** The thread's share, made or moved to `leaf` (its token kept when it had one). */
  async upsert(db: Executor, s: Omit<ShareRow, 'created'> & { userId: number }, now: Date): Promise<ShareRow> {
    const [row] = await db
      .insert(chatShares)
      .values({ ...s, created: now })
      .onConflictDoUpdate({ target: chatShares.threadId, set: { leafMessageId: s.leafMessageId, title: s.title, userId: s.userId, created: now } })
      .returning();
    return row!;
  }

  async delete(db: Executor, threadId: string): Promise<boolean> {
    return (await db.delete(chatShares).where(eq(chatShares.threadId, threadId)).returning({ id: chatShares.threadId })).length > 0;
  }

  async sharingOn(db: Executor, teamId: string): Promise<boolean> {
    const [row] = await db.select({ sharing: chatTeamSettings.sharing }).from(chatTeamSettings).where(eq(chatTeamSettings.teamId, teamId));
    return row?.sharing ?? true;
  }

  /** Sets the team's setting; turning sharing off also deletes every share of the team (in one transaction). */
  async setSharing(db: Db, teamId: string, on: boolean): Promise<void> {
    await db.transaction(async (tx) => {
      await tx
        .insert(chatTeamSettings)
        .values({ teamId, sharing: on })
        .onConflictDoUpdate({ target: chatTeamSettings.teamId, set: { sharing: on, updated: new Date() } });
      if (!on) await tx.delete(chatShares).where(eq(chatShares.teamId, teamId));
    });
  }
}

/** A message as a share shows it. */
export interface SharedMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  content: string;
  modelName: string | null;
  status: 'ok' | 'error' | 'interrupted';
  /** in the answer's order, so that its `[n]` citations still point at the right one; null: a source not shown */
  sources: Array<{ filename: string | null }>;
  created: string;
}

export class ShareService {
  private readonly repo = new ShareRepo();
  private readonly versions = new VersionsRepo();

  constructor(
    private readonly db: Db,
    private readonly chat: Pick<ChatService, 'loadThread'>,
    private readonly plus: Pick<PlusService, 'publicIds'>,
  ) {}

  /**
   * Shares the thread as it reads now (or moves its share there): whoever reads the thread may,
   * unless the team turned sharing off (403). Recorded as `share.create` in the same transaction.
   */
  async create(caller: Principal, workspaceId: string, threadId: string): Promise<ShareRow> {
    const { thread } = await this.chat.loadThread(caller, workspaceId, threadId);
    if (!(await this.repo.sharingOn(this.db, caller.teamId))) throw sharingOff();
    if (!thread.activeMessageId) throw badRequest('thread_empty', 'The thread has no messages to share');
    const existing = await this.repo.find(this.db, thread.id);
    const leafMessageId = thread.activeMessageId;
    return this.db.transaction(async (tx) => {
      const share = await this.repo.upsert(
        tx,
        {
          threadId: thread.id,
          token: existing?.token ?? randomBytes(32).toString('base64url'),
          teamId: thread.teamId,
          userId: caller.userId,
          leafMessageId,
          title: thread.title,
        },
        new Date(),
      );
      await recordAudit(tx, { action: 'share.create', actor: caller, target: { type: 'thread', id: thread.id }, details: { workspaceId } });
      return share;
    });
  }

  /** The thread's share (404: the thread is out of reach, or not shared). */
  async get(caller: Principal, workspaceId: string, threadId: string): Promise<ShareRow> {
    const { thread } = await this.chat.loadThread(caller, workspaceId, threadId);
    const share = await this.repo.find(this.db, thread.id);
    if (!share) throw notFound('Share');
    return share;
  }

  /** Revokes the thread's share: its link answers 404 from now on. Recorded as `share.revoke` in the same transaction. */
  async revoke(caller: Principal, workspaceId: string, threadId: string): Promise<void> {
    const { thread } = await this.chat.loadThread(caller, workspaceId, threadId);
    await this.db.transaction(async (tx) => {
      if (!(await this.repo.delete(tx, thread.id))) throw notFound('Share');
      await recordAudit(tx, { action: 'share.revoke', actor: caller, target: { type: 'thread', id: thread.id }, details: { workspaceId } });
    });
  }

  /** Whether a link is live (the page `/share/<token>` answers 404 when it is not). */
  async exists(token: string): Promise<boolean> {
    return (await this.repo.findLive(this.db, token)) !== undefined;
  }

  /** What a link shows, for anyone who has it. */
  async view(token: string): Promise<{ title: string; created: string; messages: SharedMessage[] }> {
    const share = await this.repo.findLive(this.db, token);
    if (!share) throw notFound('Share');
    const ids = await this.versions.pathIds(this.db, share.threadId, share.leafMessageId);
    const rows = new Map((await this.versions.withModelNames(this.db, ids)).map((m) => [m.id, m]));
    const messages = ids.flatMap((id) => rows.get(id) ?? []);
    const plusIds = [...new Set(messages.flatMap((m) => (m.sources ?? []).map((s) => s.plusId)))];
    const readable = new Set(await this.plus.publicIds(share.teamId, plusIds));
    const source = (s: StoredSource) => ({ filename: readable.has(s.plusId) ? (s.filename ?? 'entry context') : null });
    return {
      title: share.title,
      created: share.created.toISOString(),
      messages: messages.map((m) => ({
        id: m.id,
        role: m.role,
        content: m.content,
        modelName: m.role === 'assistant' ? m.modelName : null,
        status: m.status,
        sources: (m.sources ?? []).map(source),
        created: m.created.toISOString(),
      })),
    };
  }

  async sharing(caller: Principal): Promise<{ enabled: boolean }> {
    return { enabled: await this.repo.sharingOn(this.db, caller.teamId) };
  }

  /** Team owner/admin: turning sharing off revokes every share of the team at once. */
  async setSharing(caller: Principal, enabled: boolean): Promise<{ enabled: boolean }> {
    requireTeamAdmin(caller);
    await this.repo.setSharing(this.db, caller.teamId, enabled);
    return { enabled };
  }
}

const sharingOff = () => new AppError('forbidden', 'sharing_disabled', 'Sharing is turned off for this team');
