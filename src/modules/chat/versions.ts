/**
 * Versions of a thread's messages (docs/API.md, "Versions"). Messages form a tree: each has a
 * parent (the message it follows; null for a first question), and messages with the same parent
 * are versions of one another — the edits of a question (`editOf`), the regenerations of an answer
 * (`regenerate`), 1-based in the order they were written. A thread has an active leaf; its messages,
 * as listed, exported, searched back for a follow-up and sent as a turn's history, are the path
 * from its first message to that leaf. Later turns continue that path.
 *
 * This file holds the branching rules and their SQL; the turn's two statements (repo.ts) take
 * where a turn attaches (`TurnBranch`) and keep the active leaf as they write.
 */
import { and, eq, getTableColumns, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { chatMessages, chatThreads } from '../../db/schema/chat.js';
import { models, SYSTEM_SCOPE } from '../../db/schema/models.js';
import { badRequest, notFound } from '../../errors.js';
import type { MessageRow, ThreadScope } from './repo.js';
import type { TurnRequest } from './turns.js';
import { execute } from '../../db/driver.js';

export interface Versions {
  /** 1-based, in the order the versions were written */
  index: number;
  count: number;
}

/** Where a turn's messages attach when it is not simply the next turn of the active path. */
export interface TurnBranch {
  /** the thread (derived from the message the request names) */
  threadId: string;
  /** the new messages (none for a regenerate) follow this message; null: they start the thread */
  parentId: string | null;
  /** a regenerate: the stored question the new answer answers (no new message is stored) */
  questionId: string | null;
  /** the request to plan: its thread set; for a regenerate, the stored question as its prompt */
  request: TurnRequest;
}

/** A path longer than this is cut (a guard against a cycle that the writes never make). */
const MAX_DEPTH = 1_000_000;

/** The active path as a recursive CTE `path(id, parent_id, depth)`, depth 1 at the leaf, of thread `threadId` from `leaf`. */
function pathSql(threadId: string, leaf: SQL): SQL {
  return sql`path (id, parent_id, depth) as (
      select m.id, m.parent_id, 1 from chat_messages m where m.id = ${leaf} and m.thread_id = ${threadId}::uuid
      union all
      select m.id, m.parent_id, p.depth + 1 from path p join chat_messages m on m.id = p.parent_id where p.depth < ${MAX_DEPTH}
    )`;
}
const activeLeaf = (threadId: string) => sql`(select t.active_message_id from chat_threads t where t.id = ${threadId}::uuid)`;

/**
 * The number of versions a message has and which one it is, for a message `m` of chat_messages:
 * its siblings of the same role (a question and a follow-up sent before its answer was stored
 * share a parent, but are not versions of one another).
 */
const SIBLINGS = sql`s.thread_id = m.thread_id and s.parent_id is not distinct from m.parent_id and s.role = m.role`;
const VERSIONS_SQL = sql`
  (select count(*)::int from chat_messages s where ${SIBLINGS} and s.seq <= m.seq) as idx,
  (select count(*)::int from chat_messages s where ${SIBLINGS}) as cnt`;

const { search: _search, ...messageColumns } = getTableColumns(chatMessages);

export class VersionsRepo {
  /**
   * A page of the thread's active path, oldest first: the latest `limit` messages, or the `limit`
   * before the message `before` (undefined when `before` is not on the path), each with its versions.
   */
  async pathPage(
    db: Executor,
    threadId: string,
    before: string | null,
    limit: number,
  ): Promise<{ rows: Array<MessageRow & { versions: Versions }>; hasEarlier: boolean } | undefined> {
    const cut = before === null ? sql`0` : sql`(select depth from path where id = ${before}::uuid)`;
    // One row at least (the page left-joined to a constant), so that a `before` not on the path shows as a null cut.
    const res = await execute<{ cut: number | null; id: string | null; idx: number; cnt: number }>(
      db,
      sql`with recursive ${pathSql(threadId, activeLeaf(threadId))}
      select ${cut} as cut, page.id, page.idx, page.cnt from (select 1) one left join (
        select p.id, p.depth, ${VERSIONS_SQL}
        from path p join chat_messages m on m.id = p.id
        where p.depth > coalesce(${cut}, 0)
        order by p.depth asc limit ${Math.min(limit, MAX_DEPTH) + 1}
      ) page on true order by page.depth asc`,
    );
    if (res.rows[0]?.cut === null) return undefined;
    const found = res.rows.filter((r): r is typeof r & { id: string } => r.id !== null);
    const page = found.slice(0, limit);
    const byId = new Map(
      (
        await this.messages(
          db,
          page.map((r) => r.id),
        )
      ).map((m) => [m.id, m]),
    );
    const rows = page.reverse().map((r) => ({ ...byId.get(r.id)!, versions: { index: Number(r.idx), count: Number(r.cnt) } }));
    return { rows, hasEarlier: found.length > limit };
  }

  /**
   * The message ids of the path to `leaf` (the active leaf when absent), oldest first: the export
   * reads the messages a page at a time; a share, the path as it was when shared.
   */
  async pathIds(db: Executor, threadId: string, leaf?: string): Promise<string[]> {
    const from = leaf === undefined ? activeLeaf(threadId) : sql`${leaf}::uuid`;
    const res = await execute<{ id: string }>(db, sql`with recursive ${pathSql(threadId, from)} select id from path order by depth desc`);
    return res.rows.map((r) => r.id);
  }

  /** Messages by id (any order), each with its model's name (null: none, or the model is gone). */
  async withModelNames(db: Executor, ids: string[]): Promise<Array<MessageRow & { modelName: string | null }>> {
    if (ids.length === 0) return [];
    const rows = await db
      .select({ m: messageColumns, modelName: models.name })
      .from(chatMessages)
      .innerJoin(chatThreads, eq(chatThreads.id, chatMessages.threadId))
      // the model of the thread's team (its own, or a system model): ids are unique per team
      .leftJoin(models, and(eq(models.id, chatMessages.modelId), or(eq(models.scope, chatThreads.teamId), eq(models.scope, SYSTEM_SCOPE))))
      .where(inArray(chatMessages.id, ids));
    return rows.map((r) => ({ ...r.m, modelName: r.modelName }));
  }

  private async messages(db: Executor, ids: string[]): Promise<MessageRow[]> {
    return (await this.withModelNames(db, ids)).map(({ modelName: _n, ...m }) => m);
  }

  /**
   * The newest question on the path that ends at `from` (the active leaf when undefined; null: the
   * turn starts the thread, so there is none): what retrieval carries into a follow-up.
   */
  async lastQuestion(db: Executor, threadId: string, from: string | null | undefined): Promise<string | null> {
    if (from === null) return null;
    const leaf = from === undefined ? activeLeaf(threadId) : sql`${from}::uuid`;
    const res = await execute<{
      content: string;
    }>(
      db,
      sql`with recursive ${pathSql(threadId, leaf)}
      select m.content from path p join chat_messages m on m.id = p.id where m.role = 'user' order by p.depth limit 1`,
    );
    return res.rows[0]?.content ?? null;
  }

  /** A message of a thread in scope, with its parent's role and text (undefined: no such message in reach). */
  async findInScope(db: Executor, s: ThreadScope, messageId: string) {
    const [row] = await db
      .select({ id: chatMessages.id, threadId: chatMessages.threadId, parentId: chatMessages.parentId, role: chatMessages.role })
      .from(chatMessages)
      .innerJoin(chatThreads, eq(chatThreads.id, chatMessages.threadId))
      .where(
        and(
          eq(chatMessages.id, messageId),
          eq(chatThreads.teamId, s.teamId),
          eq(chatThreads.workspaceId, s.workspaceId),
          s.onlyUserId !== undefined ? eq(chatThreads.userId, s.onlyUserId) : undefined,
        ),
      );
    if (!row) return undefined;
    const parent = row.parentId
      ? (
          await db
            .select({ id: chatMessages.id, parentId: chatMessages.parentId, role: chatMessages.role, content: chatMessages.content })
            .from(chatMessages)
            .where(eq(chatMessages.id, row.parentId))
        )[0]
      : undefined;
    return { ...row, parent: parent ?? null };
  }

  /** The versions of a message of the thread (itself included), in order; undefined when it is not one of the thread's. */
  async versionsOf(db: Executor, threadId: string, messageId: string): Promise<Array<{ id: string; created: Date }> | undefined> {
    const res = await execute<{ id: string; created: Date | string }>(
      db,
      sql`select s.id, s.created from chat_messages m join chat_messages s on ${SIBLINGS}
      where m.id = ${messageId}::uuid and m.thread_id = ${threadId}::uuid order by s.seq`,
    );
    return res.rows.length === 0 ? undefined : res.rows.map((r) => ({ id: r.id, created: new Date(r.created) }));
  }

  /**
   * Makes the path through `messageId` active: its leaf is found by following, from that message,
   * the newest child at each step. False when the message is not one of the thread's.
   */
  async activate(db: Executor, threadId: string, messageId: string): Promise<boolean> {
    const res = await execute<unknown>(
      db,
      sql`with recursive down (id, depth) as (
        select m.id, 0 from chat_messages m where m.id = ${messageId}::uuid and m.thread_id = ${threadId}::uuid
        union all
        select (select c.id from chat_messages c where c.parent_id = d.id order by c.seq desc limit 1), d.depth + 1
        from down d where d.id is not null and d.depth < ${MAX_DEPTH}
      ), leaf as (select id from down where id is not null order by depth desc limit 1)
      update chat_threads t set active_message_id = leaf.id from leaf where t.id = ${threadId}::uuid returning t.id`,
    );
    return res.rows.length > 0;
  }
}

/**
 * Where a turn that names `regenerate` or `editOf` attaches, checked before anything is planned or
 * stored: the message must be in a thread the caller reads in this workspace (404 otherwise, and
 * when `threadId` names another thread); a regenerate names an answer and sends no new text, an
 * edit names a question and sends the new one. Null for an ordinary turn.
 */
export async function branchOf(repo: VersionsRepo, db: Executor, scope: ThreadScope, req: TurnRequest): Promise<TurnBranch | null> {
  const { regenerate, editOf } = req;
  if (regenerate === undefined && editOf === undefined) return null;
  if (regenerate !== undefined && editOf !== undefined)
    throw badRequest('validation_failed', 'Send regenerate or editOf, not both', [{ path: 'body/editOf', message: 'cannot be combined with regenerate' }]);
  if (regenerate !== undefined && (req.prompt !== undefined || req.messages !== undefined))
    throw badRequest('validation_failed', 'A regenerate answers the stored question again: send no prompt or messages', [
      { path: req.prompt !== undefined ? 'body/prompt' : 'body/messages', message: 'cannot be combined with regenerate' },
    ]);
  const found = await repo.findInScope(db, scope, (regenerate ?? editOf)!);
  if (!found || (req.threadId !== undefined && req.threadId !== found.threadId)) throw notFound('Message');
  const request: TurnRequest = { ...req, threadId: found.threadId };
  if (editOf !== undefined) {
    if (found.role !== 'user')
      throw badRequest('not_a_question', 'editOf must name a question (a user message)', [{ path: 'body/editOf', message: 'is not a user message' }]);
    return { threadId: found.threadId, parentId: found.parentId, questionId: null, request };
  }
  const question = found.parent;
  if (found.role !== 'assistant' || !question || question.role !== 'user')
    throw badRequest('not_an_answer', 'regenerate must name an answer to a question', [{ path: 'body/regenerate', message: 'is not an answer' }]);
  return {
    threadId: found.threadId,
    parentId: question.parentId,
    questionId: question.id,
    request: { ...request, messages: [{ role: 'user', content: question.content }] },
  };
}
