import { and, asc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { budgets, usageLedger } from '../../db/schema/usage.js';
import { readableUsageSql, type Viewer } from '../../policy/index.js';
import { promptLogSql } from '../prompt-logs/repo.js';
import { execute, executePrepared } from '../../db/driver.js';

export type BudgetRow = typeof budgets.$inferSelect;
export type BudgetScope = BudgetRow['scope'];
export type BudgetPeriod = BudgetRow['period'];

/** The part of a budget the turn needs to reserve against it (cached per team). */
export type BudgetRule = Pick<BudgetRow, 'id' | 'scope' | 'scopeId' | 'period' | 'credits' | 'requestsPerMinute' | 'created'>;

/** What one turn reserves, computed before statement 1 (docs/API.md "Usage, credits and budgets"). */
export interface Reservation {
  /** the model's chatCredits: credits per 1,000 tokens */
  price: number;
  /** the prompt's estimate without the thread's history (system text, context, new turns) */
  baseTokens: number;
  /** the prompt is fitted under this (window − maxTokens), so it never costs more */
  capTokens: number;
  /** the maximum output tokens sent upstream */
  maxOutput: number;
  /** the applicable budgets with the start of their current period and minute */
  budgets: Array<{ id: string; window: Date; minute: Date }>;
}

/** How a turn settles its reservation in statement 2. */
export interface Settlement {
  reservedCredits: number;
  budgets: Array<{ id: string; window: Date }>;
}

/** One ledger row, written by statement 2 with the turn's answer. */
export interface LedgerEntry {
  /** the turn's prompt-log id: the ledger counts an attempt once */
  id: string;
  teamId: string;
  userId: number;
  apiKeyId: string | null;
  workspaceId: string;
  modelId: string;
  modelName: string;
  promptTokens: number;
  completionTokens: number;
  credits: number;
  status: 'ok' | 'error' | 'interrupted';
  created: Date;
}

/** Marker of a refused reservation inside a database error (see usageSql.refusalCheck). */
export const REFUSED_MARKER = 'atrium_budget_refused';
const REFUSED_RE = new RegExp(`${REFUSED_MARKER}:([0-9a-f-]{36})`);

/** The budget a refused statement named, found in the error (or its causes), or null for any other error. */
export function refusedBudgetOf(err: unknown): string | null {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const m = REFUSED_RE.exec(String((e as { message?: unknown }).message ?? ''));
    if (m) return m[1]!;
  }
  return null;
}

/** The credits a turn reserves: (prompt estimate + history, capped, + max output) × price / 1000 — the SQL of usageSql.reserve in JS. */
export function reservedCredits(r: Reservation, histTokens = 0): number {
  return ((Math.min(r.baseTokens + histTokens, r.capTokens) + r.maxOutput) * r.price) / 1000;
}

const iso = (d: Date) => d.toISOString();

/**
 * SQL this module owns that the chat repository embeds in a turn's two statements, so that a
 * budget check costs no round trip of its own and the ledger row is written with the answer.
 */
export const usageSql = {
  /**
   * CTEs reserving a batch of turns against their budgets, for turns whose cost depends on their
   * thread's history: `usage_cost(key, credits)` per turn (the prompt estimate plus `eligible.hist`,
   * the tokens of the thread's last prompt + answer, capped), summed per budget into `usage_need`,
   * then the conditional UPDATE (`reserveNeeded`). `eligible` is a relation `(key, hist)` of the turns
   * that will be stored. The caller puts this after its own CTEs and must evaluate `refusalCheck`.
   */
  reserve(turns: Array<{ key: SQL; r: Reservation }>, eligible: SQL): SQL {
    const perTurn = turns.map(({ key, r }) => sql`(${key}, ${r.price}::float8, ${r.baseTokens}::int, ${r.capTokens}::int, ${r.maxOutput}::int)`);
    const perBudget = turns.flatMap(({ key, r }) =>
      r.budgets.map((b) => sql`(${key}, ${b.id}::uuid, ${iso(b.window)}::timestamptz, ${iso(b.minute)}::timestamptz)`),
    );
    return sql`usage_turn (key, price, base, cap, out) as (values ${sql.join(perTurn, sql`, `)}),
      usage_scope (key, budget_id, win, minute) as (values ${sql.join(perBudget, sql`, `)}),
      usage_cost as (
        select t.key, (least(t.base + e.hist, t.cap) + t.out) * t.price / 1000.0 as credits
        from usage_turn t join ${eligible} e on e.key = t.key
      ),
      usage_need as (
        select s.budget_id, max(s.win) as win, max(s.minute) as minute, sum(c.credits) as credits, count(*)::int as calls
        from usage_scope s join usage_cost c on c.key = s.key group by s.budget_id
      ),
      ${usageSql.reserveNeeded()}`;
  },

  /**
   * The same for turns whose cost is known in full before the statement (new threads: no history):
   * the per-budget sums are computed here, so the statement only adds the UPDATE.
   */
  reserveKnown(turns: Array<{ r: Reservation; credits: number }>): SQL {
    const need = new Map<string, { win: Date; minute: Date; credits: number; calls: number }>();
    for (const { r, credits } of turns) {
      for (const b of r.budgets) {
        const n = need.get(b.id) ?? { win: b.window, minute: b.minute, credits: 0, calls: 0 };
        n.credits += credits;
        n.calls += 1;
        need.set(b.id, n);
      }
    }
    const rows = [...need].map(
      ([id, n]) => sql`(${id}::uuid, ${iso(n.win)}::timestamptz, ${iso(n.minute)}::timestamptz, ${n.credits}::float8, ${n.calls}::int)`,
    );
    return sql`usage_need (budget_id, win, minute, credits, calls) as (values ${sql.join(rows, sql`, `)}), ${usageSql.reserveNeeded()}`;
  },

  /**
   * ONE conditional UPDATE per budget for the whole batch (its summed credits, its number of
   * calls): the counters reset when the row's window is older than the period / minute, and a
   * row is reserved only if both limits still hold on its latest version.
   */
  reserveNeeded(): SQL {
    return sql`usage_reserved as (
        update budgets b set
          used = (case when b.window_start >= n.win then b.used else 0 end) + n.credits,
          window_start = greatest(b.window_start, n.win),
          rate_count = (case when b.rate_window >= n.minute then b.rate_count else 0 end) + n.calls,
          rate_window = greatest(b.rate_window, n.minute)
        from usage_need n
        where b.id = n.budget_id
          and (b.credits is null or n.credits = 0 or (case when b.window_start >= n.win then b.used else 0 end) + n.credits <= b.credits + 1e-9)
          and (b.requests_per_minute is null or (case when b.rate_window >= n.minute then b.rate_count else 0 end) + n.calls <= b.requests_per_minute)
        returning b.id
      )`;
  },

  /**
   * A scalar that is null when every reservation held and otherwise fails the statement (a text
   * that is no integer), which undoes everything the statement did: the user's turn, its pending
   * log and the reservations of the other budgets. The message names the budget.
   */
  refusalCheck(): SQL {
    return sql`(select ('${sql.raw(REFUSED_MARKER)}:' || n.budget_id::text)::int from usage_need n where n.budget_id not in (select id from usage_reserved) limit 1)`;
  },

  /**
   * The reservation as the turn's pending prompt log keeps it (JSON text), so that the sweep can
   * give it back if the node dies before settling: the budgets with the period each reserved in,
   * and the credits — here when known before the statement, else added by `creditsIntoLog`.
   */
  logRecord(r: Reservation, credits: number | null): string {
    return JSON.stringify({ budgets: r.budgets.map((b) => [b.id, iso(b.window)]), ...(credits === null ? {} : { credits }) });
  },

  /** The pending log's reservation (`v.reservation`) completed with the credits `reserve` computed for its turn (`usage_cost`). */
  creditsIntoLog(): SQL {
    return sql`(select v.reservation || jsonb_build_object('credits', c.credits) from usage_cost c where c.key = v.key)`;
  },

  /** CTEs of statement 2: the ledger rows (once per id) and the settlement of the reservations. */
  record(entries: Array<{ entry: LedgerEntry; settle: Settlement | null }>): SQL {
    const rows = entries.map(
      ({ entry: e }) =>
        sql`(${e.id}::uuid, ${e.teamId}::uuid, ${e.userId}::int, ${e.apiKeyId}::uuid, ${e.workspaceId}::uuid, ${e.modelId}::uuid, ${e.modelName}::text, ${e.promptTokens}::int, ${e.completionTokens}::int, ${e.credits}::float8, ${e.status}::text, ${iso(e.created)}::timestamptz)`,
    );
    // A turn that cost exactly what it reserved (a free model under a rate limit: 0 and 0) has nothing to settle.
    const deltas = entries.flatMap(({ entry, settle }) =>
      settle && entry.credits !== settle.reservedCredits
        ? settle.budgets.map((b) => sql`(${entry.id}::uuid, ${b.id}::uuid, ${iso(b.window)}::timestamptz, ${entry.credits - settle.reservedCredits}::float8)`)
        : [],
    );
    const ledger = sql`usage_ledger_rows as (
        insert into usage_ledger (id, team_id, user_id, api_key_id, workspace_id, model_id, model_name, prompt_tokens, completion_tokens, credits, status, created)
        values ${sql.join(rows, sql`, `)} on conflict (id) do nothing
        returning id
      )`;
    if (deltas.length === 0) return ledger;
    // Only the entries this statement wrote are settled: run again (a retry of a statement that had
    // committed), it settles nothing twice.
    return sql`${ledger}, usage_settled as (
        update budgets b set used = greatest(0, b.used + d.delta)
        from (select v.budget_id, v.win, sum(v.delta) as delta from (values ${sql.join(deltas, sql`, `)}) as v(entry_id, budget_id, win, delta)
          where v.entry_id in (select id from usage_ledger_rows) group by v.budget_id, v.win) d
        where b.id = d.budget_id and b.window_start = d.win
      )`;
  },
};

export interface UsageFilter {
  /** whose usage: the team's or only their own (policy/activity.ts) */
  reader: Viewer;
  from?: Date;
  to?: Date;
}

export type GroupBy = 'day' | 'user' | 'model' | 'workspace' | 'apiKey';

export interface UsageGroup {
  key: string | null;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  credits: number;
}

const GROUP_KEYS: Record<GroupBy, SQL> = {
  day: sql`to_char(${usageLedger.created} at time zone 'UTC', 'YYYY-MM-DD')`,
  user: sql`${usageLedger.userId}::text`,
  model: sql`${usageLedger.modelId}::text`,
  workspace: sql`${usageLedger.workspaceId}::text`,
  apiKey: sql`${usageLedger.apiKeyId}::text`,
};

export class UsageRepo {
  private where(f: UsageFilter): SQL {
    return and(
      readableUsageSql(f.reader, usageLedger),
      f.from ? gte(usageLedger.created, f.from) : undefined,
      f.to ? lt(usageLedger.created, f.to) : undefined,
    )!;
  }

  async report(db: Executor, f: UsageFilter, groupBy: GroupBy): Promise<UsageGroup[]> {
    const key = GROUP_KEYS[groupBy];
    const rows = await db
      .select({
        key: sql<string | null>`${key}`,
        requests: sql<number>`count(*)::int`,
        promptTokens: sql<number>`coalesce(sum(${usageLedger.promptTokens}), 0)::bigint`,
        completionTokens: sql<number>`coalesce(sum(${usageLedger.completionTokens}), 0)::bigint`,
        credits: sql<number>`coalesce(sum(${usageLedger.credits}), 0)::float8`,
      })
      .from(usageLedger)
      .where(this.where(f))
      .groupBy(key)
      .orderBy(asc(key));
    return rows.map((r) => ({
      key: r.key,
      requests: Number(r.requests),
      promptTokens: Number(r.promptTokens),
      completionTokens: Number(r.completionTokens),
      credits: Number(r.credits),
    }));
  }

  /** The caller's own spend since each of the given instants, in one query. */
  async spendSince(db: Executor, teamId: string, userId: number, since: Record<'day' | 'month', Date>): Promise<Record<'day' | 'month' | 'total', number>> {
    const [row] = await db
      .select({
        day: sql<number>`coalesce(sum(${usageLedger.credits}) filter (where ${usageLedger.created} >= ${iso(since.day)}::timestamptz), 0)::float8`,
        month: sql<number>`coalesce(sum(${usageLedger.credits}) filter (where ${usageLedger.created} >= ${iso(since.month)}::timestamptz), 0)::float8`,
        total: sql<number>`coalesce(sum(${usageLedger.credits}), 0)::float8`,
      })
      .from(usageLedger)
      .where(and(eq(usageLedger.teamId, teamId), eq(usageLedger.userId, userId)));
    return { day: Number(row?.day ?? 0), month: Number(row?.month ?? 0), total: Number(row?.total ?? 0) };
  }

  /**
   * What each budget's scope spent, by the ledger, since the given instant (the in-process
   * counters' starting point, counters-memory.ts): one query over the team's ledger rows
   * (`(team_id, created)` index), whatever the number of budgets.
   */
  async spendByBudget(
    db: Executor,
    teamId: string,
    list: ReadonlyArray<Pick<BudgetRow, 'id' | 'scope' | 'scopeId'> & { since: Date }>,
  ): Promise<Map<string, number>> {
    if (list.length === 0) return new Map();
    const rows = list.map(
      (b) =>
        sql`(${b.id}::uuid, ${b.scope}::text, ${b.scope === 'user' ? Number(b.scopeId) : null}::int, ${b.scope === 'apiKey' ? b.scopeId : null}::uuid, ${iso(b.since)}::timestamptz)`,
    );
    const res = await execute<{ id: string; spent: number }>(
      db,
      sql`
      select v.id::text as id, coalesce((
        select sum(l.credits) from usage_ledger l
        where l.team_id = ${teamId}::uuid and l.created >= v.since
          and (v.scope = 'team' or l.user_id = v.user_id or l.api_key_id = v.key_id)
      ), 0)::float8 as spent
      from (values ${sql.join(rows, sql`, `)}) as v(id, scope, user_id, key_id, since)`,
    );
    return new Map(res.rows.map((r) => [r.id, Number(r.spent)]));
  }

  async findBudget(db: Executor, id: string): Promise<BudgetRow | undefined> {
    const [row] = await db.select().from(budgets).where(eq(budgets.id, id));
    return row;
  }

  /**
   * What the turn needs of the team's budgets, read on every turn on PostgreSQL (never cached
   * there): a statement prepared by name, 0.28 → 0.15 ms p50 on PostgreSQL here.
   */
  async listBudgetRules(db: Executor, teamId: string): Promise<BudgetRule[]> {
    const { rows } = await executePrepared<Omit<BudgetRule, 'created'> & { createdMs: number }>(
      db,
      sql`select id, scope, scope_id as "scopeId", period, credits, requests_per_minute as "requestsPerMinute",
          (extract(epoch from created) * 1000)::float8 as "createdMs"
        from budgets where team_id = ${teamId}::uuid order by created, id`,
    );
    return rows.map(({ createdMs, ...r }) => ({ ...r, created: new Date(createdMs) }));
  }

  async listBudgets(db: Executor, teamId: string): Promise<BudgetRow[]> {
    return db.select().from(budgets).where(eq(budgets.teamId, teamId)).orderBy(asc(budgets.created), asc(budgets.id));
  }

  /** Inserts the budget; undefined when one exists already for the same scope and period. */
  async insertBudget(
    db: Executor,
    v: Pick<BudgetRow, 'id' | 'teamId' | 'scope' | 'scopeId' | 'period' | 'credits' | 'requestsPerMinute'>,
  ): Promise<BudgetRow | undefined> {
    const [row] = await db.insert(budgets).values(v).onConflictDoNothing().returning();
    return row;
  }

  /**
   * Changes a budget's limits (a field left out keeps its value; null removes that limit) in one
   * statement that refuses to leave it with neither: 'missing' when the budget is not the team's,
   * 'empty' when the change would remove both. The period's spend and rate window are kept.
   */
  async updateBudgetLimits(
    db: Executor,
    teamId: string,
    id: string,
    change: { credits?: number | null; requestsPerMinute?: number | null },
  ): Promise<BudgetRow | 'missing' | 'empty'> {
    const credits = change.credits === undefined ? sql`${budgets.credits}` : sql`${change.credits}::float8`;
    const rpm = change.requestsPerMinute === undefined ? sql`${budgets.requestsPerMinute}` : sql`${change.requestsPerMinute}::int`;
    const [row] = await db
      .update(budgets)
      .set({
        ...(change.credits !== undefined ? { credits: change.credits } : {}),
        ...(change.requestsPerMinute !== undefined ? { requestsPerMinute: change.requestsPerMinute } : {}),
      })
      .where(and(eq(budgets.teamId, teamId), eq(budgets.id, id), sql`(${credits} is not null or ${rpm} is not null)`))
      .returning();
    if (row) return row;
    const [exists] = await db
      .select({ id: budgets.id })
      .from(budgets)
      .where(and(eq(budgets.teamId, teamId), eq(budgets.id, id)));
    return exists ? 'empty' : 'missing';
  }

  async deleteBudget(db: Executor, teamId: string, id: string): Promise<boolean> {
    const rows = await db
      .delete(budgets)
      .where(and(eq(budgets.teamId, teamId), eq(budgets.id, id)))
      .returning({ id: budgets.id });
    return rows.length > 0;
  }

  /**
   * Give back the reservations of turns a crashed node left (their logs finished by the stale-log
   * sweep), each once however many nodes sweep: taking one clears it in the same statement. Only
   * in the period it was reserved in. Returns how many turns' reservations were given back.
   */
  async releaseAbandoned(db: Executor): Promise<number> {
    const res = await execute<{ n: number }>(
      db,
      sql`
      with taken as (${promptLogSql.takeAbandonedReservations()}),
      freed as (
        select (e->>0)::uuid as id, (e->>1)::timestamptz as win, sum(coalesce((t.reservation->>'credits')::float8, 0)) as credits
        from taken t cross join lateral jsonb_array_elements(t.reservation->'budgets') e group by 1, 2
      ),
      released as (
        update budgets b set used = greatest(0, b.used - f.credits) from freed f where b.id = f.id and b.window_start = f.win
      )
      select count(*)::int as n from taken`,
    );
    return Number(res.rows[0]?.n ?? 0);
  }

  /** Give back what a turn reserved when it ends without reaching statement 2. */
  async release(db: Executor, s: Settlement): Promise<void> {
    if (s.budgets.length === 0 || s.reservedCredits === 0) return;
    const rows = s.budgets.map((b) => sql`(${b.id}::uuid, ${iso(b.window)}::timestamptz)`);
    await execute(
      db,
      sql`update budgets b set used = greatest(0, b.used - ${s.reservedCredits}::float8)
      from (values ${sql.join(rows, sql`, `)}) as v(id, win) where b.id = v.id and b.window_start = v.win`,
    );
  }

  /** The ids of a user's API keys (a member sees the budgets of their own keys). */
  async keyIdsOf(db: Executor, userId: number): Promise<string[]> {
    const res = await execute<{ id: string }>(db, sql`select id::text as id from api_keys where user_id = ${userId}::int`);
    return res.rows.map((r) => r.id);
  }

  /**
   * Whether a budget's scope id names something of the team: the team itself, a user (not
   * deleted) or an API key of one of its users. Reads `users` and `api_keys` (owned by teams)
   * for this one check, rather than giving teams a dependency on budgets.
   */
  async scopeExists(db: Executor, teamId: string, scope: BudgetScope, scopeId: string): Promise<boolean> {
    const q =
      scope === 'team'
        ? sql`select ${scopeId} = ${teamId} as ok`
        : scope === 'user'
          ? sql`select exists (select 1 from users where id = ${Number(scopeId)}::int and team_id = ${teamId}::uuid and deleted is null) as ok`
          : sql`select exists (select 1 from api_keys k join users u on u.id = k.user_id where k.id = ${scopeId}::uuid and u.team_id = ${teamId}::uuid) as ok`;
    const res = await execute<{ ok: boolean }>(db, q);
    return res.rows[0]?.ok === true;
  }
}
