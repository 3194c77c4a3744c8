import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { chatThreads } from '../../db/schema/chat.js';
import { workspaces } from '../../db/schema/workspaces.js';
import { readableThreadsSql, type Principal } from '../../policy/index.js';
import { execute } from '../../db/driver.js';

/**
 * What a search looks for: the words before the last as whole words, the last one also as a
 * prefix while the person is still typing it (the text ends inside it).
 */
export interface SearchTerms {
  /** text whose words must all occur (English stemming, stop words out: `plainto_tsquery`) */
  whole: string;
  /** letters and digits only; matched as a prefix of a word, stemmed or not */
  prefix: string | null;
}

const WORD = /[\p{L}\p{N}]+/gu;

/** null when the text has no word at all (only spaces or punctuation). */
export function searchTerms(q: string): SearchTerms | null {
  const words = [...q.matchAll(WORD)];
  const last = words.at(-1);
  if (!last) return null;
  const end = last.index + last[0].length;
  if (end < q.length) return { whole: q, prefix: null };
  return { whole: q.slice(0, last.index), prefix: last[0] };
}

/** Selection marks ts_headline puts around matched words; removed from the text before it is marked. */
export const MARK_START = '\u0002';
export const MARK_END = '\u0003';

/** The indexed part of a message (migration 0017: the tsvector covers the first 100,000 characters). */
const INDEXED_CHARS = 100_000;
/** A snippet: this many characters of the message (marks and white space included), from a little before its first match. */
const SNIPPET_CHARS = 240;
const SNIPPET_BEFORE = 80;

export interface SearchRow {
  threadId: string;
  workspaceId: string;
  messageId: string;
  /** title and message excerpt with MARK_START/MARK_END around matched words */
  markedTitle: string;
  markedSnippet: string;
  /** whether the snippet starts after the message's start / ends before its end */
  cutStart: boolean;
  cutEnd: boolean;
  createdMs: number;
  total: number;
}

/**
 * Conversation search (docs/API.md, "Conversation search"). One thread per result, scored by its
 * best message (`ts_rank`) plus, when the title holds every word, 1 + the title's rank — so a
 * title hit comes before threads that only mention the words. Ties: the most recently updated
 * thread first. Only threads the caller reads (`readableThreadsSql`), never a failed turn's
 * message. The result's message is the best matching one, or the thread's first for a title hit.
 */
export class ChatSearchRepo {
  private query(terms: SearchTerms): SQL {
    const whole = sql`plainto_tsquery('english', ${terms.whole})`;
    if (terms.prefix === null) return whole;
    const p = `${terms.prefix}:*`;
    return sql`(${whole} && (to_tsquery('english', ${p}) || to_tsquery('simple', ${p})))`;
  }

  private hits(caller: Principal, terms: SearchTerms, workspaceId: string | null): SQL {
    const q = this.query(terms);
    // Matching messages come from the GIN index first (materialized: the planner, misjudging how many
    // threads the visibility rule keeps, would otherwise test every message of every readable thread
    // even for a rare word the index finds in a handful), then the visibility rule keeps the caller's
    // — applied to the matching threads only, so a rare word costs its matches, not the team's
    // threads. Each thread is scored by its best message (an aggregate, no sort of the matches);
    // which message that is, is looked up only for the threads of the page asked for.
    const readable = readableThreadsSql(caller, chatThreads, workspaces);
    const inWorkspace = workspaceId ? sql` and chat_threads.team_id = ${caller.teamId}::uuid and chat_threads.workspace_id = ${workspaceId}::uuid` : sql``;
    return sql`
      with matched as materialized (
        select m.thread_id, ts_rank(m.search, ${q}) as rank
        from chat_messages m where m.search @@ ${q} and m.status <> 'error'
      ),
      best as (
        select m.thread_id, max(m.rank) as rank
        from matched m
        join chat_threads on chat_threads.id = m.thread_id
        join workspaces on workspaces.team_id = chat_threads.team_id and workspaces.id = chat_threads.workspace_id
        where ${readable}${inWorkspace}
        group by m.thread_id
      ),
      titled as (
        select chat_threads.id, 1 + ts_rank(chat_threads.search, ${q}) as rank
        from chat_threads join workspaces on workspaces.team_id = chat_threads.team_id and workspaces.id = chat_threads.workspace_id
        where chat_threads.search @@ ${q} and ${readable}${inWorkspace}
      ),
      hit as (
        select t.id, t.workspace_id, t.title, t.updated, best.rank is not null as in_messages,
          coalesce(best.rank, 0) + coalesce(titled.rank, 0) as score
        from (select thread_id as id from best union select id from titled) h
        join chat_threads t on t.id = h.id
        left join best on best.thread_id = h.id
        left join titled on titled.id = h.id
      )`;
  }

  async search(
    db: Executor,
    caller: Principal,
    terms: SearchTerms,
    workspaceId: string | null,
    page: { page: number; size: number },
  ): Promise<{ rows: SearchRow[]; total: number }> {
    const marks = sql`'StartSel=' || chr(2) || ', StopSel=' || chr(3)`;
    const clean = (text: SQL) => sql`translate(${text}, chr(2) || chr(3), '')`;
    const q = this.query(terms);
    const res = await execute<{
      thread_id: string;
      workspace_id: string;
      total: number;
      message_id: string;
      created_ms: number;
      marked_title: string;
      marked_snippet: string;
      cut_start: boolean;
      cut_end: boolean;
    }>(
      db,
      sql`${this.hits(caller, terms, workspaceId)},
      page as (
        select hit.*, count(*) over () as total from hit
        order by score desc, updated desc, id limit ${page.size} offset ${page.page * page.size}
      )
      select page.id as thread_id, page.workspace_id, page.total::int as total, m.id as message_id,
        (extract(epoch from m.created) * 1000)::float8 as created_ms,
        ts_headline('english', ${clean(sql`page.title`)}, ${q}, ${marks} || ', HighlightAll=true') as marked_title,
        substr(m.marked, m.window_start, ${SNIPPET_CHARS}) as marked_snippet,
        m.window_start > 1 as cut_start, m.window_start + ${SNIPPET_CHARS} <= length(m.marked) as cut_end
      from page
      cross join lateral (
        select c.id, c.created, c.marked, greatest(1, strpos(c.marked, chr(2)) - ${SNIPPET_BEFORE}) as window_start
        from (
          select c.id, c.created, ts_headline('english', ${clean(sql`left(c.content, ${INDEXED_CHARS})`)}, ${q}, ${marks} || ', HighlightAll=true') as marked
          from (
            (select c.id, c.content, c.created from chat_messages c
             where page.in_messages and c.thread_id = page.id and c.search @@ ${q} and c.status <> 'error'
             order by ts_rank(c.search, ${q}) desc, c.seq desc limit 1)
            union all
            (select c.id, c.content, c.created from chat_messages c
             where not page.in_messages and c.thread_id = page.id and c.status <> 'error' order by c.seq limit 1)
          ) c
        ) c
      ) m
      order by page.score desc, page.updated desc, page.id`,
    );
    const rows = res.rows.map((r) => ({
      threadId: r.thread_id,
      workspaceId: r.workspace_id,
      messageId: r.message_id,
      markedTitle: r.marked_title,
      markedSnippet: r.marked_snippet,
      cutStart: r.cut_start,
      cutEnd: r.cut_end,
      createdMs: Number(r.created_ms),
      total: Number(r.total),
    }));
    // A page past the last has no row to carry the count.
    const total = rows[0]?.total ?? (page.page > 0 ? await this.count(db, caller, terms, workspaceId) : 0);
    return { rows, total };
  }

  private async count(db: Executor, caller: Principal, terms: SearchTerms, workspaceId: string | null): Promise<number> {
    const res = await execute<{ n: number }>(db, sql`${this.hits(caller, terms, workspaceId)} select count(*)::int as n from hit`);
    return Number(res.rows[0]?.n ?? 0);
  }
}
