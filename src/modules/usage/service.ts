import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { csvStream } from '../../csv.js';
import { TtlCache } from '../../cache.js';
import type { Db } from '../../db/client.js';
import { AppError, badRequest, conflict, notFound } from '../../errors.js';
import { isTeamAdmin, requireTeamAdmin, type Principal } from '../teams/service.js';
import { minuteStart, periodEnd, periodStart, secondsUntil } from './periods.js';
import { refusedBudgetOf, UsageRepo, type BudgetRow, type BudgetRule, type Reservation, type Settlement, type UsageGroup } from './repo.js';
import type { BudgetT, CreateBudgetBodyT, MeUsageT, UpdateBudgetBodyT, UsageQueryT } from './schema.js';

/** Which budgets a team has: read on every turn, so cached like the other per-request reads (cache.ts). */
const RULES_TTL_MS = 2_000;
/** The reservation's prompt estimate is Atrium's own token count with this headroom (docs/API.md). */
const PROMPT_HEADROOM = 1.25;
const PROMPT_OVERHEAD_TOKENS = 16;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a turn costs at most, known before its first statement. */
export interface TurnCost {
  /** the model's chatCredits (credits per 1,000 tokens; 0 free) */
  price: number;
  /** Atrium's token count of the prompt without the thread's history */
  promptTokens: number;
  /** the prompt is fitted under this many tokens */
  promptCap: number;
  maxOutput: number;
}

const USAGE_CSV_COLUMNS = ['key', 'requests', 'promptTokens', 'completionTokens', 'credits'] as const;

export class UsageService {
  private readonly repo = new UsageRepo();
  private readonly rules = new TtlCache<string, BudgetRule[]>(RULES_TTL_MS);

  constructor(private readonly db: Db) {}

  // ---- the turn's side ----------------------------------------------------------------------

  /**
   * What the turn must reserve, or null when no budget applies to the caller (the turn then runs
   * the same statements as without budgets). A free model reserves only against rate limits.
   * `costOf` (tokenising the prompt) runs only when a budget applies.
   */
  async reservationFor(caller: Principal, price: number, costOf: () => TurnCost, now = new Date()): Promise<Reservation | null> {
    const rules = (await this.teamRules(caller.teamId)).filter((r) => applies(r, caller) && (price > 0 || r.requestsPerMinute !== null));
    if (rules.length === 0) return null;
    // Counted only when a budget applies: a turn without one pays nothing for budgets.
    const cost = costOf();
    const minute = minuteStart(now);
    return {
      price: cost.price,
      baseTokens: Math.ceil(cost.promptTokens * PROMPT_HEADROOM) + PROMPT_OVERHEAD_TOKENS,
      capTokens: Math.max(0, cost.promptCap),
      maxOutput: cost.maxOutput,
      budgets: rules.map((r) => ({ id: r.id, window: periodStart(r.period, now), minute })),
    };
  }

  settlementOf(r: Reservation, reservedCredits: number): Settlement {
    return { reservedCredits, budgets: r.budgets.map((b) => ({ id: b.id, window: b.window })) };
  }

  /** The credits a turn costs: (prompt + completion) × chatCredits / 1,000. */
  creditsOf(price: number, promptTokens: number, completionTokens: number): number {
    return price > 0 ? ((promptTokens + completionTokens) * price) / 1000 : 0;
  }

  /**
   * A refused reservation (a database error naming the budget) as the caller's 429; null for any
   * other error. Which limit refused is read from the budget's row (the refusal path may cost a read).
   */
  async refusal(caller: Principal, err: unknown, now = new Date()): Promise<AppError | null> {
    const budgetId = refusedBudgetOf(err);
    if (!budgetId) return null;
    const row = await this.repo.findBudget(this.db, budgetId);
    const scope = row ? `${row.scope === 'apiKey' ? 'API key' : row.scope} ` : '';
    const minute = minuteStart(now);
    const rateFull = row?.requestsPerMinute != null && (row.rateWindow && row.rateWindow >= minute ? row.rateCount : 0) >= row.requestsPerMinute;
    if (row && (rateFull || row.credits === null)) {
      const e = new AppError('rate_limited', 'rate_limited', `The ${scope}rate limit of ${row.requestsPerMinute} requests per minute is reached`);
      e.retryAfterSeconds = secondsUntil(new Date(minute.getTime() + 60_000), now);
      return e;
    }
    if (!row) this.rules.delete(caller.teamId);
    const period = row?.period ?? 'day';
    const end = periodEnd(period, now);
    const e = new AppError(
      'rate_limited',
      'budget_exceeded',
      `The ${scope}budget of ${row?.credits ?? '?'} credits ${period === 'total' ? 'in total' : `per ${period}`} cannot cover this call` +
        (end ? '; it resets at the start of the next period' : '; it does not reset'),
    );
    if (end) e.retryAfterSeconds = secondsUntil(end, now);
    return e;
  }

  /** Give back a reservation whose turn ended before its answer was stored. */
  async release(s: Settlement): Promise<void> {
    await this.repo.release(this.db, s);
  }

  private async teamRules(teamId: string): Promise<BudgetRule[]> {
    const hit = this.rules.get(teamId);
    if (hit) return hit;
    const rows = await this.repo.listBudgets(this.db, teamId);
    const rules = rows.map(({ id, scope, scopeId, period, credits, requestsPerMinute }) => ({ id, scope, scopeId, period, credits, requestsPerMinute }));
    this.rules.set(teamId, rules);
    return rules;
  }

  // ---- budgets -------------------------------------------------------------------------------

  async createBudget(caller: Principal, body: CreateBudgetBodyT, now = new Date()): Promise<BudgetT> {
    requireTeamAdmin(caller);
    const credits = body.credits ?? null;
    const requestsPerMinute = body.requestsPerMinute ?? null;
    if (credits === null && requestsPerMinute === null) {
      throw badRequest('validation_failed', 'A budget needs credits, requestsPerMinute or both', [{ path: 'body/credits', message: 'set credits or requestsPerMinute' }]);
    }
    const scopeId = normaliseScopeId(body.scope, body.scopeId);
    if (!(await this.repo.scopeExists(this.db, caller.teamId, body.scope, scopeId))) throw notFound(body.scope === 'apiKey' ? 'API key' : body.scope === 'user' ? 'User' : 'Team');
    const row = await this.repo.insertBudget(this.db, { id: randomUUID(), teamId: caller.teamId, scope: body.scope, scopeId, period: body.period, credits, requestsPerMinute });
    if (!row) throw conflict(`A ${body.period} budget for this ${body.scope} exists already: edit that one or delete it first`);
    this.rules.delete(caller.teamId);
    return budgetView(row, now);
  }

  /** Owner/admin: every budget of the team; member: those that apply to them (team, themselves, their keys). */
  async listBudgets(caller: Principal, now = new Date()): Promise<BudgetT[]> {
    const rows = await this.repo.listBudgets(this.db, caller.teamId);
    if (isTeamAdmin(caller)) return rows.map((r) => budgetView(r, now));
    const keys = new Set(await this.repo.keyIdsOf(this.db, caller.userId));
    return rows.filter((r) => r.scope === 'team' || (r.scope === 'user' ? r.scopeId === String(caller.userId) : keys.has(r.scopeId))).map((r) => budgetView(r, now));
  }

  /** Change a budget's credit and/or rate limit; its scope and period stay (a different one is a new budget). */
  async updateBudget(caller: Principal, id: string, body: UpdateBudgetBodyT, now = new Date()): Promise<BudgetT> {
    requireTeamAdmin(caller);
    if (body.credits === undefined && body.requestsPerMinute === undefined) {
      throw badRequest('validation_failed', 'Nothing to change: send credits, requestsPerMinute or both', [{ path: 'body', message: 'set credits or requestsPerMinute' }]);
    }
    const row = await this.repo.updateBudgetLimits(this.db, caller.teamId, id, body);
    if (row === 'missing') throw notFound('Budget');
    if (row === 'empty') {
      throw badRequest('validation_failed', 'A budget needs credits, requestsPerMinute or both: delete it instead of removing both limits', [
        { path: 'body/credits', message: 'set credits or requestsPerMinute' },
      ]);
    }
    this.rules.delete(caller.teamId);
    return budgetView(row, now);
  }

  async deleteBudget(caller: Principal, id: string): Promise<void> {
    requireTeamAdmin(caller);
    if (!(await this.repo.deleteBudget(this.db, caller.teamId, id))) throw notFound('Budget');
    this.rules.delete(caller.teamId);
  }

  // ---- reports -------------------------------------------------------------------------------

  async report(caller: Principal, q: UsageQueryT): Promise<UsageGroup[]> {
    return this.repo.report(this.db, this.filter(caller, q), q.groupBy);
  }

  async csv(caller: Principal, q: UsageQueryT): Promise<Readable> {
    const groups = await this.report(caller, q);
    return csvStream(USAGE_CSV_COLUMNS, groups.map((g) => USAGE_CSV_COLUMNS.map((c) => g[c])));
  }

  /** The caller's own spend, and every budget that applies to this call's caller (user and key) with what it has left. */
  async me(caller: Principal, now = new Date()): Promise<MeUsageT> {
    const [spent, rows] = await Promise.all([
      this.repo.spendSince(this.db, caller.teamId, caller.userId, { day: periodStart('day', now), month: periodStart('month', now) }),
      this.repo.listBudgets(this.db, caller.teamId),
    ]);
    return { userId: caller.userId, spent, budgets: rows.filter((r) => applies(r, caller)).map((r) => budgetView(r, now)) };
  }

  private filter(caller: Principal, q: UsageQueryT) {
    const from = q.from ? new Date(q.from) : undefined;
    const to = q.to ? new Date(q.to) : undefined;
    if (from && to && from > to) throw badRequest('validation_failed', 'from must not be after to', [{ path: 'querystring/from', message: 'must not be after to' }]);
    return { teamId: caller.teamId, ...(isTeamAdmin(caller) ? {} : { userId: caller.userId }), ...(from ? { from } : {}), ...(to ? { to } : {}) };
  }
}

/** Whether a budget limits this caller: the team's, the user's own, or the API key the call uses. */
function applies(r: BudgetRule, caller: Principal): boolean {
  switch (r.scope) {
    case 'team':
      return r.scopeId === caller.teamId;
    case 'user':
      return r.scopeId === String(caller.userId);
    case 'apiKey':
      return r.scopeId === caller.keyId;
  }
}

/** The scope id in its stored text form, or a 400 when it cannot name such a thing at all. */
function normaliseScopeId(scope: BudgetRow['scope'], raw: string | number): string {
  const bad = (message: string) => badRequest('validation_failed', `scopeId ${message}`, [{ path: 'body/scopeId', message }]);
  if (scope === 'user') {
    const n = typeof raw === 'number' ? raw : /^[1-9][0-9]{0,9}$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > 2_147_483_647) throw bad('must be a user id (a positive integer)');
    return String(n);
  }
  if (typeof raw !== 'string' || !UUID_RE.test(raw)) throw bad(`must be ${scope === 'team' ? 'the team id' : 'an API key id'} (a UUID)`);
  return raw.toLowerCase();
}

function budgetView(r: BudgetRow, now: Date): BudgetT {
  const start = periodStart(r.period, now);
  const spent = r.windowStart && r.windowStart >= start ? r.used : 0;
  const end = periodEnd(r.period, now);
  return {
    id: r.id,
    scope: r.scope,
    scopeId: r.scopeId,
    period: r.period,
    credits: r.credits,
    requestsPerMinute: r.requestsPerMinute,
    spent,
    remaining: r.credits === null ? null : Math.max(0, r.credits - spent),
    periodStart: start.toISOString(),
    resetsAt: end ? end.toISOString() : null,
    created: r.created.toISOString(),
  };
}
