import { and, desc, eq, getTableColumns, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { execute, executePrepared } from '../../db/driver.js';
import {
  chatMessages,
  chatThreads,
  type StoredImage,
  type StoredSource,
  type StoredToolCall,
  type StoredTurnError,
  type StoredUsage,
} from '../../db/schema/chat.js';
import type { ChatMessage } from '../../providers/types.js';
import { plusFileSql } from '../plus/repo.js';
import { insertImagesSql, type ImageRow } from './images-repo.js';
import { promptLogSql, type FinishedLog, type PendingLog } from '../prompt-logs/repo.js';
import { reservedCredits, usageSql, type LedgerEntry, type Reservation, type Settlement } from '../usage/repo.js';
import type { ThreadScope } from '../../policy/index.js';
import { isUuid } from '../../uuid.js';

// The search vectors (conversation search, search-repo.ts) are never read back with a row.
const { search: _threadSearch, ...threadColumns } = getTableColumns(chatThreads);

export type ThreadRow = Omit<typeof chatThreads.$inferSelect, 'search'>;
export type MessageRow = Omit<typeof chatMessages.$inferSelect, 'search'>;
export type ThreadWithCount = ThreadRow & { messageCount: number };

export interface UserTurnRecord {
  thread: { id: string; teamId: string; workspaceId: string; userId: number; title: string };
  /** continue this existing thread, only while it is in this scope; null: create the thread */
  existing: ThreadScope | null;
  /**
   * Where the messages attach in an existing thread (versions.ts): after `parentId` (null: as its
   * first messages); null: after the thread's active leaf. The history read is the path ending there.
   */
  after: { parentId: string | null } | null;
  /** in order, each following the one before (none: a regenerate, which stores only its answer); the last becomes the active leaf */
  messages: Array<{ id: string; role: string; content: string; created: Date; images: StoredImage[] | null }>;
  /** the bytes of the messages' images, stored in the same statement */
  images: ImageRow[];
  log: PendingLog;
  now: Date;
  /** what the turn reserves against its budgets (null: none applies); a refusal fails the statement */
  reservation: Reservation | null;
  /** false: an ephemeral turn (never with `existing`) — only its pending log is written, no thread or messages */
  store: boolean;
}

/** An earlier message of the thread; assistant ones carry their model and usage (to calibrate the next fit). */
export type HistoryMessage = Omit<ChatMessage, 'images'> & { modelId: string | null; usage: StoredUsage | null; images: StoredImage[] | null };

/** What storing a user turn answers: null when the thread is not (or no longer) in scope. */
export type StoredUserTurn = {
  /** the thread's earlier messages (not failed ones), newest first, read before this turn's */
  history: HistoryMessage[];
  /** whether Plus files were added to the thread (its turns then search them) */
  threadHasFiles: boolean;
  /** the credits reserved for the turn (0 without a reservation) */
  reservedCredits: number;
} | null;

export interface AnswerRecord {
  threadId: string;
  message: {
    id: string;
    /** the question it answers; the answer becomes the thread's active leaf */
    parentId: string | null;
    content: string;
    modelId: string;
    /** null for a failed turn's message: nothing was answered */
    usage: StoredUsage | null;
    sources: StoredSource[];
    status: 'ok' | 'interrupted' | 'error';
    error: StoredTurnError | null;
    /** the workspace tools the model called on the way to this answer (null: none) */
    toolCalls: StoredToolCall[] | null;
    /** the generated images (an image model's answer); null or absent: none */
    images?: StoredImage[] | null;
    /** their bytes, stored in the same statement */
    imageRows?: ImageRow[];
  } | null;
  logId: string;
  log: FinishedLog;
  now: Date;
  /** the turn's ledger row (every attempt has one) and the settlement of its reservation */
  ledger: LedgerEntry;
  settle: Settlement | null;
  /**
   * The user's turn when it was not stored before the call (a plain answer in a new or ephemeral
   * thread, with nothing to reserve in SQL): the whole turn is then written in one statement
   * (ChatRepo.recordWholeTurns).
   */
  turn?: UserTurnRecord;
}

/** Whether the answer was kept; false when its thread was deleted while it was being generated. */
export interface StoredAnswer {
  kept: boolean;
}

/** At most this many earlier messages are read for a prompt (prompt.ts then fits them to the window). */
const HISTORY_LIMIT = 200;

export const THREAD_DELETED = 'thread_deleted: the thread was deleted while the answer was being generated';

/** Which threads of a workspace a user sees: policy/threads.ts builds it (`threadScope`), the queries here apply it. */
export type { ThreadScope };

export class ChatRepo {
  private scope(s: ThreadScope): SQL {
    return and(
      eq(chatThreads.teamId, s.teamId),
      eq(chatThreads.workspaceId, s.workspaceId),
      s.onlyUserId !== undefined ? eq(chatThreads.userId, s.onlyUserId) : undefined,
    )!;
  }

  /**
   * The messages of the thread as listed: its active path (versions.ts), not every version. The
   * path is walked from the active leaf up its parents; the depth guard is the one of versions.ts.
   */
  private readonly messageCount = sql<number>`(with recursive p (id, parent_id, depth) as (
      select m.id, m.parent_id, 1 from chat_messages m where m.id = "chat_threads"."active_message_id" and m.thread_id = "chat_threads"."id"
      union all
      select m.id, m.parent_id, p.depth + 1 from p join chat_messages m on m.id = p.parent_id where p.depth < 1000000
    ) select count(*)::int from p)`;

  async listThreads(db: Executor, s: ThreadScope): Promise<ThreadWithCount[]> {
    const rows = await db
      .select({ t: threadColumns, messageCount: this.messageCount })
      .from(chatThreads)
      .where(this.scope(s))
      .orderBy(desc(chatThreads.updated), desc(chatThreads.id));
    return rows.map((r) => ({ ...r.t, messageCount: r.messageCount }));
  }

  async findThread(db: Executor, s: ThreadScope, id: string): Promise<ThreadWithCount | undefined> {
    const [row] = await db
      .select({ t: threadColumns, messageCount: this.messageCount })
      .from(chatThreads)
      .where(and(eq(chatThreads.id, id), this.scope(s)));
    return row ? { ...row.t, messageCount: row.messageCount } : undefined;
  }

  async findThreadInTeam(db: Executor, teamId: string, id: string): Promise<ThreadRow | undefined> {
    const [row] = await db
      .select(threadColumns)
      .from(chatThreads)
      .where(and(eq(chatThreads.id, id), eq(chatThreads.teamId, teamId)));
    return row;
  }

  async renameThread(db: Executor, id: string, title: string): Promise<void> {
    await db.update(chatThreads).set({ title, updated: new Date() }).where(eq(chatThreads.id, id));
  }

  /**
   * Retention: delete the team's threads (not pinned) with no activity since `before`, messages
   * and all (cascade); answers how many. Owned here, called by modules/retention in its transaction.
   */
  async purgeThreads(db: Executor, teamId: string, before: Date): Promise<number> {
    const rows = await db
      .delete(chatThreads)
      .where(and(eq(chatThreads.teamId, teamId), eq(chatThreads.pinned, false), lt(chatThreads.updated, before)))
      .returning({ id: chatThreads.id });
    return rows.length;
  }

  /** Pinning does not count as activity: `updated` stays. */
  async setPinned(db: Executor, id: string, pinned: boolean): Promise<void> {
    await db.update(chatThreads).set({ pinned }).where(eq(chatThreads.id, id));
  }

  async deleteThreads(db: Executor, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const rows = await db.delete(chatThreads).where(inArray(chatThreads.id, ids)).returning({ id: chatThreads.id });
    return rows.length;
  }

  /**
   * The tokens of the thread's last exchange — its latest answer's prompt + completion — which a
   * follow-up's budget reservation adds for the history (the same figure statement 1 computes in
   * SQL when it reserves; 0 for a thread without an answer).
   */
  async lastExchangeTokens(db: Executor, threadId: string): Promise<number> {
    const res = await execute<{ n: number }>(
      db,
      sql`select coalesce((
        select (usage->>'promptTokens')::int + (usage->>'completionTokens')::int from chat_messages
        where thread_id = ${threadId}::uuid and role = 'assistant' and usage is not null order by seq desc limit 1), 0)::int as n`,
    );
    return Number(res.rows[0]?.n ?? 0);
  }

  /**
   * The user's side of one or more turns in ONE statement (atomic without an explicit
   * transaction), which is also the turn's only read: per turn, a new thread is created or an
   * existing one (still in scope) gets its `updated` bumped — a turn whose thread is not in scope
   * writes nothing and answers null; then its message(s) and pending prompt log are inserted, and
   * the thread's earlier messages come back for the prompt. Several turns share the statement
   * under group commit (db/group-commit.ts).
   */
  async recordUserTurns(db: Executor, turns: UserTurnRecord[]): Promise<StoredUserTurn[]> {
    if (turns.every((v) => v.existing === null)) return this.recordNewThreadTurns(db, turns);
    if (turns.some((v) => !v.store)) {
      // Ephemeral turns never continue a thread: they go with the new-thread statement, the rest with this one.
      const out: StoredUserTurn[] = new Array<StoredUserTurn>(turns.length);
      const parts = [turns.map((v, i) => [v, i] as const).filter(([v]) => !v.store), turns.map((v, i) => [v, i] as const).filter(([v]) => v.store)];
      const [eph, rest] = await Promise.all([
        this.recordNewThreadTurns(
          db,
          parts[0]!.map(([v]) => v),
        ),
        this.recordUserTurns(
          db,
          parts[1]!.map(([v]) => v),
        ),
      ]);
      parts[0]!.forEach(([, i], k) => (out[i] = eph[k]!));
      parts[1]!.forEach(([, i], k) => (out[i] = rest[k]!));
      return out;
    }
    const key = (i: number) => sql`${i}::int`;
    const imageRows = turns.flatMap((v, i) => v.images.map((row) => ({ key: i, row })));
    const req = turns.map((v, i) => {
      const t = v.thread;
      const anchored = v.after !== null;
      const activeTo = v.messages.at(-1)?.id ?? null;
      return sql`(${key(i)}, ${t.id}::uuid, ${v.existing === null}::boolean, ${t.teamId}::uuid, ${t.workspaceId}::uuid, ${t.userId}::int, ${v.existing?.onlyUserId ?? null}::int, ${t.title}::text, ${v.now.toISOString()}::timestamptz, ${anchored}::boolean, ${v.after?.parentId ?? null}::uuid, ${activeTo}::uuid)`;
    });
    // Each message follows the one before it in its turn; the first, the turn's base (ok.base).
    const messages = turns.flatMap((v, i) =>
      v.messages.map(
        (m, j) =>
          sql`(${key(i)}, ${m.id}::uuid, ${v.thread.id}::uuid, ${j > 0 ? v.messages[j - 1]!.id : null}::uuid, ${m.role}::text, ${m.content}::text, ${imagesJson(m.images)}::jsonb, ${m.created.toISOString()}::timestamptz)`,
      ),
    );
    const insertMessages =
      messages.length === 0
        ? sql``
        : sql`, m as (
        insert into chat_messages (id, thread_id, parent_id, role, content, images, created)
        select v.id, v.thread_id, coalesce(v.parent_id, ok.base), v.role, v.content, v.images, v.created
        from (values ${sql.join(messages, sql`, `)}) as v(key, id, thread_id, parent_id, role, content, images, created) join ok on ok.key = v.key
      )`;
    // A reserving turn's log keeps its reservation (the sweep gives a crashed turn's back); its credits are computed below.
    const logs = turns.map((v, i) => promptLogSql.pendingRow(key(i), v.log, v.reservation ? usageSql.logRecord(v.reservation, null) : null));
    const reserving = turns.flatMap((v, i) => (v.reservation ? [{ key: key(i), r: v.reservation }] : []));
    // Budgets: the follow-up's prompt is priced with its history's size, the thread's last prompt + answer.
    const reserve = reserving.length
      ? sql`, usage_hist as (
          select ok.key, case when ok.is_new then 0 else coalesce((
            select (cm.usage->>'promptTokens')::int + (cm.usage->>'completionTokens')::int from chat_messages cm
            where cm.thread_id = ok.thread_id and cm.role = 'assistant' and cm.usage is not null order by cm.seq desc limit 1), 0) end as hist
          from ok
        ), ${usageSql.reserve(reserving, sql`usage_hist`)}`
      : sql``;
    const reserved = reserving.length
      ? sql`, ${usageSql.refusalCheck()} as refused, (select c.credits from usage_cost c where c.key = ok.key) as reserved`
      : sql`, 0 as reserved`;
    // `bumped` finds the thread by its primary key only: the scope check is wrapped in IS TRUE (the
    // same truth) so that no index can serve it. Left bare, it ties with chat_threads_ws_idx under
    // statistics taken while the table was small, and that plan reads every thread of the
    // workspace (1.2 ms of a 2.2 ms statement at 3,000 threads, and growing with them).
    const res = await executePrepared<{ key: number; history: string; has_files: boolean; reserved: number | null }>(
      db,
      sql`
      with recursive req (key, thread_id, is_new, team_id, workspace_id, user_id, scope_user, title, now, anchored, anchor, active_to) as (
        values ${sql.join(req, sql`, `)}
      ), prev as (
        select t.id, t.active_message_id from chat_threads t where t.id in (select thread_id from req where not is_new)
      ), bumped as (
        update chat_threads t set updated = r.now, active_message_id = coalesce(r.active_to, t.active_message_id) from req r
        where not r.is_new and t.id = r.thread_id
          and ${inScope(sql`t`, sql`r.team_id`, sql`r.workspace_id`, sql`r.scope_user`)}
        returning t.id, t.team_id, t.workspace_id, t.user_id
      ), ok as (
        select r.key, r.thread_id, r.is_new, null::uuid as base from req r where r.is_new
        union all
        select r.key, r.thread_id, r.is_new, case when r.anchored then r.anchor else (select p.active_message_id from prev p where p.id = r.thread_id) end
        from req r join bumped b on b.id = r.thread_id
        where not r.is_new and ${inScope(sql`b`, sql`r.team_id`, sql`r.workspace_id`, sql`r.scope_user`)}
      ), created as (
        insert into chat_threads (id, team_id, workspace_id, user_id, title, created, updated, active_message_id)
        select thread_id, team_id, workspace_id, user_id, title, now, now, active_to from req where is_new
      )${insertMessages}${imageRows.length ? sql`, img as (${insertImagesSql(imageRows, sql`select key from ok`)})` : sql``}, ${historyWalk(sql`ok`)}${reserve}, l as (${promptLogSql.insertPending(logs, sql`select key from ok`, reserving.length ? usageSql.creditsIntoLog() : undefined)})
      select ok.key${reserved},
        case when ok.is_new then '[]' else ${historyJson(sql`ok.key`)} end as history,
        case when ok.is_new then false else ${plusFileSql.threadHasFiles(sql`ok.thread_id`)} end as has_files
      from ok`,
    );
    const out: StoredUserTurn[] = turns.map(() => null);
    for (const r of res.rows)
      out[r.key] = { history: JSON.parse(r.history) as HistoryMessage[], threadHasFiles: r.has_files, reservedCredits: Number(r.reserved ?? 0) };
    return out;
  }

  /**
   * A follow-up written whole (recordWholeTurns) reads before its call what statement 1 would have
   * answered, and writes nothing: the thread, while in `scope`, its active leaf (where the turn
   * attaches), the path ending there and whether files were added to it; null when the thread is
   * not in scope. The thread is found by its primary key only, as statement 1's `bumped` is.
   */
  async readFollowUp(db: Executor, s: ThreadScope, threadId: string): Promise<(NonNullable<StoredUserTurn> & { base: string | null }) | null> {
    const res = await executePrepared<{ base: string | null; history: string; has_files: boolean }>(
      db,
      sql`
      with recursive ok (key, thread_id, base) as (
        select 0, t.id, t.active_message_id from chat_threads t
        where t.id = ${threadId}::uuid and ${inScope(sql`t`, sql`${s.teamId}::uuid`, sql`${s.workspaceId}::uuid`, sql`${s.onlyUserId ?? null}::int`)}
      ), ${historyWalk(sql`ok`)}
      select ok.base, ${historyJson(sql`ok.key`)} as history, ${plusFileSql.threadHasFiles(sql`ok.thread_id`)} as has_files from ok`,
    );
    const row = res.rows[0];
    return row ? { base: row.base, history: JSON.parse(row.history) as HistoryMessage[], threadHasFiles: row.has_files, reservedCredits: 0 } : null;
  }

  /**
   * The common case of statement 1 — every turn opens a new thread — without the scope check, the
   * history read and the has-files probe (a new thread has neither): plain inserts in one statement,
   * which PGlite plans and runs in about half the time of the general statement.
   */
  private async recordNewThreadTurns(db: Executor, turns: UserTurnRecord[]): Promise<StoredUserTurn[]> {
    if (turns.length === 0) return [];
    // Ephemeral turns (store: false) write their pending log only.
    const kept = turns.filter((v) => v.store);
    const threads = kept.map((v) => {
      const t = v.thread;
      const now = v.now.toISOString();
      return sql`(${t.id}::uuid, ${t.teamId}::uuid, ${t.workspaceId}::uuid, ${t.userId}::int, ${t.title}::text, ${now}::timestamptz, ${now}::timestamptz, ${v.messages.at(-1)?.id ?? null}::uuid)`;
    });
    const messages = kept.flatMap((v) =>
      v.messages.map(
        (m, j) =>
          sql`(${m.id}::uuid, ${v.thread.id}::uuid, ${j > 0 ? v.messages[j - 1]!.id : null}::uuid, ${m.role}::text, ${m.content}::text, ${imagesJson(m.images)}::jsonb, ${m.created.toISOString()}::timestamptz)`,
      ),
    );
    const imageRows = kept.flatMap((v) => v.images.map((row) => ({ key: 0, row })));
    const reserving = turns.some((v) => v.reservation);
    const credits = turns.map((v) => (v.reservation ? reservedCredits(v.reservation) : 0));
    // A reserving turn's log keeps its reservation, so that the sweep can give a crashed turn's back.
    const logs = promptLogSql.insertPending(
      turns.map((v, i) => promptLogSql.pendingRow(sql`${i}::int`, v.log, v.reservation ? usageSql.logRecord(v.reservation, credits[i]!) : null)),
      null,
    );
    // A batch of ephemeral turns only has logs to write.
    const threadsAndMessages =
      kept.length === 0
        ? null
        : sql`t as (
        insert into chat_threads (id, team_id, workspace_id, user_id, title, created, updated, active_message_id) values ${sql.join(threads, sql`, `)}
      ), m as (
        insert into chat_messages (id, thread_id, parent_id, role, content, images, created) values ${sql.join(messages, sql`, `)}
      )${imageRows.length ? sql`, img as (${insertImagesSql(imageRows, null)})` : sql``}`;
    if (!reserving) {
      await executePrepared(db, threadsAndMessages ? sql`with ${threadsAndMessages} ${logs}` : logs);
      return turns.map(() => ({ history: [], threadHasFiles: false, reservedCredits: 0 }));
    }
    // With budgets: the same inserts, the reservation (its cost known in full: no history), and a
    // final check that fails the whole statement on a refusal.
    await executePrepared(
      db,
      sql`
      with ${threadsAndMessages ? sql`${threadsAndMessages}, ` : sql``}l as (${logs}), ${usageSql.reserveKnown(turns.flatMap((v, i) => (v.reservation ? [{ r: v.reservation, credits: credits[i]! }] : [])))}
      select ${usageSql.refusalCheck()} as refused`,
    );
    return turns.map((_, i) => ({ history: [], threadHasFiles: false, reservedCredits: credits[i]! }));
  }

  /**
   * Of `answers`, those whose statement has taken effect — its ledger row, which every answer's
   * statement writes and nothing else does, exists — each with whether its answer was kept (its
   * message stored; false: its thread was deleted meanwhile). The others are not stored yet.
   */
  async storedAnswers(db: Executor, answers: Array<Pick<AnswerRecord, 'logId' | 'ledger' | 'message'>>): Promise<Map<string, StoredAnswer>> {
    // (a journal line whose ids are not all uuids cannot have been stored, and would fail the read)
    const readable = answers.filter((a) => [a.logId, a.ledger.id, ...(a.message ? [a.message.id] : [])].every(isUuid));
    if (readable.length === 0) return new Map();
    const rows = readable.map((a) => sql`(${a.logId}::uuid, ${a.ledger.id}::uuid, ${a.message?.id ?? null}::uuid)`);
    const res = await execute<{ log_id: string; kept: boolean }>(
      db,
      sql`select v.log_id, (v.msg_id is null or exists (select 1 from chat_messages m where m.id = v.msg_id)) as kept
      from (values ${sql.join(rows, sql`, `)}) as v(log_id, ledger_id, msg_id)
      where exists (select 1 from usage_ledger u where u.id = v.ledger_id)`,
    );
    return new Map(res.rows.map((r) => [r.log_id, { kept: r.kept }]));
  }

  /**
   * Turns written whole, in ONE statement once their answers are known: for each, the new thread,
   * or the continued one bumped while still in its scope (either way its answer the active leaf),
   * the user's messages (a follow-up's after the leaf readFollowUp read) and the answer — one
   * INSERT, so that their order is the thread's — the finished prompt log and the ledger row; an
   * ephemeral turn writes its log and ledger row only. A thread whose workspace was deleted, or a
   * continued thread deleted, while its answer was generated is not kept (its log ends
   * `interrupted`, as statement 2 ends one whose thread was deleted). Only turns without images
   * or a reservation in SQL come here (turns.ts).
   */
  async recordWholeTurns(db: Executor, answers: Array<AnswerRecord & { turn: UserTurnRecord }>): Promise<StoredAnswer[]> {
    const kept = answers.filter((v) => v.turn.store);
    const leafOf = ({ turn: v, message }: (typeof kept)[number]) => message?.id ?? v.messages.at(-1)?.id ?? null;
    const fresh = kept.filter((v) => v.turn.existing === null);
    const continued = kept.filter((v) => v.turn.existing !== null);
    const threads = fresh.map((w) => {
      const t = w.turn.thread;
      const now = w.turn.now.toISOString();
      return sql`(${t.id}::uuid, ${t.teamId}::uuid, ${t.workspaceId}::uuid, ${t.userId}::int, ${t.title}::text, ${now}::timestamptz, ${now}::timestamptz, ${leafOf(w)}::uuid)`;
    });
    // One row per continued thread (an UPDATE changes a row once): two follow-ups of a thread in
    // one batch both attach where they were asked, and the later one's answer is the leaf shown.
    const lastOfThread = [...new Map(continued.map((w) => [w.turn.thread.id, w])).values()];
    const follows = lastOfThread.map((w) => {
      const s = w.turn.existing!;
      return sql`(${w.turn.thread.id}::uuid, ${s.teamId}::uuid, ${s.workspaceId}::uuid, ${s.onlyUserId ?? null}::int, ${w.turn.now.toISOString()}::timestamptz, ${leafOf(w)}::uuid)`;
    });
    let ord = 0;
    // A follow-up's first message attaches where its history was read (UserTurnRecord.after).
    const messages = kept.flatMap(({ turn: v, message: a, threadId, now }) => [
      ...v.messages.map(
        (m, j) =>
          sql`(${ord++}::int, ${m.id}::uuid, ${v.thread.id}::uuid, ${j > 0 ? v.messages[j - 1]!.id : (v.after?.parentId ?? null)}::uuid, ${m.role}::text, ${m.content}::text, null::uuid, null::jsonb, null::jsonb, 'ok'::text, null::jsonb, null::jsonb, ${imagesJson(m.images)}::jsonb, ${m.created.toISOString()}::timestamptz)`,
      ),
      ...(a
        ? [sql`(${ord++}::int, ${a.id}::uuid, ${threadId}::uuid, ${a.parentId}::uuid, 'assistant'::text, ${answerCells(a)}, ${now.toISOString()}::timestamptz)`]
        : []),
    ]);
    // The threads written: those created, and those continued while still in their scope (found by
    // primary key only, as statement 1's `bumped`); a continued thread's answer becomes its active leaf.
    const created = threads.length
      ? sql`tn as (
        insert into chat_threads (id, team_id, workspace_id, user_id, title, created, updated, active_message_id)
        select v.* from (values ${sql.join(threads, sql`, `)}) as v(id, team_id, workspace_id, user_id, title, created, updated, active_message_id)
        where exists (select 1 from workspaces w where w.team_id = v.team_id and w.id = v.workspace_id)
        returning id
      )`
      : sql`tn as (select null::uuid as id where false)`;
    const bumped = follows.length
      ? sql`te as (
        update chat_threads t set updated = v.now, active_message_id = v.leaf
        from (values ${sql.join(follows, sql`, `)}) as v(id, team_id, workspace_id, scope_user, now, leaf)
        where t.id = v.id and ${inScope(sql`t`, sql`v.team_id`, sql`v.workspace_id`, sql`v.scope_user`)}
        returning t.id
      )`
      : sql`te as (select null::uuid as id where false)`;
    // One INSERT in `ord` order: each thread's messages get their `seq` in the order they were said.
    const threadsAndMessages =
      kept.length === 0
        ? sql`t as (select null::uuid as id where false), `
        : sql`${created}, ${bumped}, t as (select id from tn union all select id from te), m as (
        insert into chat_messages (id, thread_id, parent_id, role, content, model_id, usage, sources, status, error, tool_calls, images, created)
        select v.id, v.thread_id, v.parent_id, v.role, v.content, v.model_id, v.usage, v.sources, v.status, v.error, v.tool_calls, v.images, v.created
        from (values ${sql.join(messages, sql`, `)}) as v(ord, id, thread_id, parent_id, role, content, model_id, usage, sources, status, error, tool_calls, images, created)
        where v.thread_id in (select id from t)
        order by v.ord
      ), `;
    const logs = promptLogSql.insertFinished(
      answers.map((v) => ({ log: v.turn.log, end: v.log })),
      sql`v.thread_id is not null and v.thread_id not in (select id from t)`,
      THREAD_DELETED,
    );
    const res = await executePrepared<{ id: string }>(
      db,
      sql`
      with ${threadsAndMessages}l as (${logs}),
      ${usageSql.record(answers.map((v) => ({ entry: v.ledger, settle: v.settle })))}
      select id from t`,
    );
    const stored = new Set(res.rows.map((r) => r.id));
    return answers.map((v) => ({ kept: !v.turn.store || stored.has(v.turn.thread.id) }));
  }

  /**
   * The answers of one or more turns in ONE statement: the assistant messages (if any) and the
   * finished logs. An answer whose thread is gone (deleted while it ran) is not kept; its log
   * ends `interrupted` with THREAD_DELETED.
   */
  async recordAnswers(db: Executor, answers: AnswerRecord[]): Promise<StoredAnswer[]> {
    const key = (i: number) => sql`${i}::int`;
    const rows = answers.map((v, i) => {
      const m = v.message;
      return m
        ? sql`(${key(i)}, ${m.id}::uuid, ${m.parentId}::uuid, ${v.threadId}::uuid, ${answerCells(m)}, ${v.now.toISOString()}::timestamptz)`
        : sql`(${key(i)}, null::uuid, null::uuid, ${v.threadId}::uuid, null::text, null::uuid, null::jsonb, null::jsonb, null::text, null::jsonb, null::jsonb, null::jsonb, ${v.now.toISOString()}::timestamptz)`;
    });
    const logs = answers.map((v, i) => promptLogSql.finishedRow(key(i), v.logId, v.log));
    const imageRows = answers.flatMap((v, i) => (v.message?.imageRows ?? []).map((row) => ({ key: i, row })));
    const res = await executePrepared<{ key: number; kept: boolean }>(
      db,
      sql`
      with a (key, msg_id, parent_id, thread_id, content, model_id, usage, sources, status, error, tool_calls, images, created) as (values ${sql.join(rows, sql`, `)}),
      m as (
        insert into chat_messages (id, thread_id, parent_id, role, content, model_id, usage, sources, status, error, tool_calls, images, created)
        select a.msg_id, a.thread_id, a.parent_id, 'assistant', a.content, a.model_id, a.usage, a.sources, a.status, a.error, a.tool_calls, a.images, a.created
        from a where a.msg_id is not null and exists (select 1 from chat_threads t where t.id = a.thread_id)
        returning id, thread_id
      ), leaf as (update chat_threads t set active_message_id = m.id from m where t.id = m.thread_id)${imageRows.length ? sql`, img as (${insertImagesSql(imageRows, sql`select a.key from a join m on m.id = a.msg_id`)})` : sql``}, lost as (select a.key from a where a.msg_id is not null and a.msg_id not in (select id from m)),
      l as (${promptLogSql.finish(logs, sql`select key from lost`, THREAD_DELETED)}),
      ${usageSql.record(answers.map((v) => ({ entry: v.ledger, settle: v.settle })))}
      select a.key, a.key not in (select key from lost) as kept from a`,
    );
    const out: StoredAnswer[] = answers.map(() => ({ kept: false }));
    for (const r of res.rows) out[r.key] = { kept: r.kept };
    return out;
  }
}

/** `hist`: per turn of `turns` (key, base), the messages on the path ending at its base, the base first (depth 1). */
/**
 * A thread row `t` in a scope (ThreadScope's team, workspace and, when not null, user, as SQL
 * values): wrapped in IS TRUE, the same truth, so that no index can serve it and a thread found
 * by its primary key is checked, not searched for (recordUserTurns).
 */
function inScope(t: SQL, teamId: SQL, workspaceId: SQL, onlyUserId: SQL): SQL {
  return sql`(${t}.team_id = ${teamId} and ${t}.workspace_id = ${workspaceId} and (${onlyUserId} is null or ${t}.user_id = ${onlyUserId})) is true`;
}

function historyWalk(turns: SQL): SQL {
  return sql`hist (key, id, parent_id, depth) as (
        select ${turns}.key, cm.id, cm.parent_id, 1 from ${turns} join chat_messages cm on cm.id = ${turns}.base
        union all
        select h.key, cm.id, cm.parent_id, h.depth + 1 from hist h join chat_messages cm on cm.id = h.parent_id where h.depth < ${HISTORY_LIMIT}
      )`;
}

/** The history (HistoryMessage[], newest first, failed answers left out) of turn `key` of historyWalk, as JSON text. */
function historyJson(key: SQL): SQL {
  return sql`(
          select coalesce(json_agg(json_build_object('role', cm.role, 'content', cm.content, 'modelId', cm.model_id,
            'usage', case when cm.role = 'assistant' then cm.usage end, 'images', cm.images) order by h.depth), '[]'::json)::text
          from hist h join chat_messages cm on cm.id = h.id where h.key = ${key} and cm.status <> 'error'
        )`;
}

/** An answer's cells for its chat_messages row, in column order: content, model_id, usage, sources, status, error, tool_calls, images. */
function answerCells(m: NonNullable<AnswerRecord['message']>): SQL {
  return sql`${m.content}::text, ${m.modelId}::uuid, ${m.usage ? JSON.stringify(m.usage) : null}::jsonb, ${JSON.stringify(m.sources)}::jsonb, ${m.status}::text, ${m.error ? JSON.stringify(m.error) : null}::jsonb, ${m.toolCalls ? JSON.stringify(m.toolCalls) : null}::jsonb, ${imagesJson(m.images ?? null)}::jsonb`;
}

/** A message's images as its jsonb column holds them (null: none). */
function imagesJson(images: StoredImage[] | null): string | null {
  return images && images.length > 0 ? JSON.stringify(images) : null;
}
