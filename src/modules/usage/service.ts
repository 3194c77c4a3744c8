import { filterDetails, recordAudit } from '../audit/record.js';
import { bumpBudgetsRevision } from '../teams/repo.js';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { csvStream } from '../../csv.js';
import { TtlCache } from '../../cache.js';
import type { Database, Db } from '../../db/client.js';
import { badRequest, conflict, notFound, type AppError } from '../../errors.js';
import { isTeamAdmin, mayReadBudget, requireTeamAdmin, type Principal } from '../../policy/index.js';
import { InProcessCounters } from './counters-memory.js';
import { refusalError, StatementCounters, type BudgetCounters, type BudgetHold } from './counters.js';
import { minuteStart, periodEnd, periodStart } from './periods.js';
import { refusedBudgetOf, UsageRepo, type BudgetRow, type BudgetRule, type Reservation, type UsageGroup } from './repo.js';
import type { BudgetT, CreateBudgetBodyT, MeUsageT, UpdateBudgetBodyT, UsageQueryT } from './schema.js';
import { isUuid } from '../../uuid.js';

/** The reservation's prompt estimate is Atrium's own token count with this headroom (docs/API.md). */
const PROMPT_HEADROOM = 1.25;
const PROMPT_OVERHEAD_TOKENS = 16;
/** Teams whose rules are kept by revision; past it the map starts again (each team reads once more). */
const MAX_TEAMS_KEPT = 10_000;
/** Provider prompt tokens per Atrium token are trusted between these (an absurd report is clamped). */
const MIN_PROMPT_RATIO = 1;
const MAX_PROMPT_RATIO = 8;

/** What a turn costs at most, known before its first statement. */
export interface TurnCost {
  /** the model: its provider's own prompt count, once reported, sizes the reservation */
  modelId: string;
  /** the model's chatCredits (credits per 1,000 tokens; 0 free) */
  price: number;
  /** Atrium's token count of the prompt without the thread's history */
  promptTokens: number;
  /** the prompt is fitted under this many tokens */
  promptCap: number;
  maxOutput: number;
}

const USAGE_CSV_COLUMNS = ['key', 'requests', 'promptTokens', 'completionTokens', 'credits'] as const;

/**
 * The budget counters for this database, chosen once at start-up: in this process for the
 * embedded database (one process opens it), on the `budgets` rows for PostgreSQL (several nodes).
 */
export function budgetCounters(database: Pick<Database, 'kind' | 'db'>): BudgetCounters {
  return database.kind === 'pglite' ? new InProcessCounters(database.db, new UsageRepo()) : new StatementCounters(database.db, new UsageRepo());
}

export class UsageService {
  private readonly repo = new UsageRepo();
  private readonly rules: TtlCache<string, BudgetRule[]>;
  /** Per team, its rules as read at a revision of its budgets (Principal.budgetsRevision). */
  private readonly atRevision = new Map<string, { revision: number; rules: BudgetRule[] }>();

  /**
   * `rulesCacheMs`: how long a team's list of budgets is kept in this process (it is read on
   * every turn). Only where this process is the database's one user (services.ts): with several
   * nodes a budget created on one must bind the turns of all at once.
   */
  constructor(
    private readonly db: Db,
    private readonly counters: BudgetCounters,
    rulesCacheMs: number,
  ) {
    this.rules = new TtlCache<string, BudgetRule[]>(rulesCacheMs);
  }

  /** Per model, the provider's prompt tokens per Atrium token in its latest report (promptRatio). */
  private readonly promptRatios = new Map<string, number>();

  /**
   * A provider counted `reported` prompt tokens where Atrium counted `local`: later reservations
   * for this model count the prompt in the provider's units (a tokenizer that counts more — or a
   * provider that over-counts — is reserved for, instead of discovered at settlement).
   */
  notePromptCount(modelId: string, reported: number, local: number): void {
    if (!(reported > 0 && local > 0)) return;
    if (this.promptRatios.size >= 10_000) this.promptRatios.clear();
    this.promptRatios.set(modelId, Math.min(MAX_PROMPT_RATIO, Math.max(MIN_PROMPT_RATIO, reported / local)));
  }

  /** The model's latest ratio on this node, if it has answered here (chat's fit calibrates with it too). */
  promptRatioOf(modelId: string): number | undefined {
    return this.promptRatios.get(modelId);
  }

  private promptRatio(modelId: string): number {
    return this.promptRatios.get(modelId) ?? MIN_PROMPT_RATIO;
  }

  // ---- the turn's side ----------------------------------------------------------------------

  /**
   * Reserve what the turn may cost against the caller's budgets, or null when none applies (the
   * turn then runs the same statements as without budgets). A free model reserves only against
   * rate limits. `costOf` (tokenising the prompt) runs only when a budget applies; `historyTokens`
   * (null for a new thread) is asked only by counters that reserve before statement 1. Where the
   * reservation is taken depends on the counters (counters.ts): a refusal is thrown here, or by
   * statement 1 and turned into the 429 by `refusal`.
   */
  async hold(
    caller: Principal,
    price: number,
    costOf: () => TurnCost,
    historyTokens: (() => Promise<number>) | null,
    now = new Date(),
  ): Promise<BudgetHold | null> {
    const rules = (await this.teamRules(caller)).filter((r) => applies(r, caller) && (price > 0 || r.requestsPerMinute !== null));
    if (rules.length === 0) return null;
    // Counted only when a budget applies: a turn without one pays nothing for budgets.
    const cost = costOf();
    const minute = minuteStart(now);
    const reservation: Reservation = {
      price: cost.price,
      baseTokens: Math.ceil(cost.promptTokens * this.promptRatio(cost.modelId) * PROMPT_HEADROOM) + PROMPT_OVERHEAD_TOKENS,
      capTokens: Math.max(0, cost.promptCap),
      maxOutput: cost.maxOutput,
      budgets: rules.map((r) => ({ id: r.id, window: periodStart(r.period, now), minute })),
    };
    return this.counters.hold(caller, rules, reservation, historyTokens, now);
  }

  /**
   * The credits a turn is charged: (prompt + completion) × chatCredits / 1,000, and never more
   * than `reserved` (what a budgeted turn reserved; null: no budget applied). So concurrent
   * turns never overspend a budget, however a provider counts or ignores its output cap: each
   * is charged at most what was checked against the budget before it was called.
   */
  creditsOf(price: number, promptTokens: number, completionTokens: number, reserved: number | null = null): number {
    const credits = price > 0 ? ((promptTokens + completionTokens) * price) / 1000 : 0;
    return reserved === null ? credits : Math.min(credits, reserved);
  }

  /**
   * A reservation refused by statement 1 (a database error naming the budget) as the caller's 429;
   * null for any other error. Which limit refused is read from the budget's row (the refusal path may cost a read).
   */
  async refusal(caller: Principal, err: unknown, now = new Date()): Promise<AppError | null> {
    const budgetId = refusedBudgetOf(err);
    if (!budgetId) return null;
    const row = await this.repo.findBudget(this.db, budgetId);
    if (!row) this.forgetRules(caller.teamId);
    const minute = minuteStart(now);
    const rateFull = row?.requestsPerMinute != null && (row.rateWindow && row.rateWindow >= minute ? row.rateCount : 0) >= row.requestsPerMinute;
    return refusalError(row ?? null, rateFull, now);
  }

  /** Give back the reservations crashed nodes left (`BudgetCounters.releaseAbandoned`); how many. */
  releaseAbandoned(): Promise<number> {
    return this.counters.releaseAbandoned();
  }

  /**
   * The caller's team's budget rules. With the budgets revision its key's read gave (read on
   * every request on PostgreSQL), the rules this node read at that revision, else read now: a
   * change on any node raised the revision in its transaction, so the next call on every node
   * reads again. On the embedded database a key's principal may be cached, and its revision with
   * it; the process is then the only writer, and its own changes drop the entry (forgetRules).
   * Without a revision (a session), the TTL cache of the one-process database, or a read.
   */
  private async teamRules(caller: Principal): Promise<BudgetRule[]> {
    const { teamId, budgetsRevision: revision } = caller;
    if (revision === undefined) return this.rules.load(teamId, () => this.repo.listBudgetRules(this.db, teamId));
    const hit = this.atRevision.get(teamId);
    if (hit?.revision === revision) return hit.rules;
    const rules = await this.repo.listBudgetRules(this.db, teamId);
    if (this.atRevision.size >= MAX_TEAMS_KEPT) this.atRevision.clear();
    this.atRevision.set(teamId, { revision, rules });
    return rules;
  }

  /** This node changed the team's budgets (or found one gone): nothing it read of them is used again. */
  private forgetRules(teamId: string): void {
    this.rules.delete(teamId);
    this.atRevision.delete(teamId);
  }

  // ---- budgets -------------------------------------------------------------------------------

  async createBudget(caller: Principal, body: CreateBudgetBodyT, now = new Date()): Promise<BudgetT> {
    requireTeamAdmin(caller);
    const credits = body.credits ?? null;
    const requestsPerMinute = body.requestsPerMinute ?? null;
    if (credits === null && requestsPerMinute === null) {
      throw badRequest('validation_failed', 'A budget needs credits, requestsPerMinute or both', [
        { path: 'body/credits', message: 'set credits or requestsPerMinute' },
      ]);
    }
    const scopeId = normaliseScopeId(body.scope, body.scopeId);
    if (!(await this.repo.scopeExists(this.db, caller.teamId, body.scope, scopeId)))
      throw notFound(body.scope === 'apiKey' ? 'API key' : body.scope === 'user' ? 'User' : 'Team');
    const row = await this.db.transaction(async (tx) => {
      const inserted = await this.repo.insertBudget(tx, {
        id: randomUUID(),
        teamId: caller.teamId,
        scope: body.scope,
        scopeId,
        period: body.period,
        credits,
        requestsPerMinute,
      });
      if (inserted) {
        await bumpBudgetsRevision(tx, caller.teamId);
        await recordAudit(tx, {
          action: 'budget.create',
          actor: caller,
          target: { type: 'budget', id: inserted.id },
          details: { scope: body.scope, scopeId, period: body.period, credits, requestsPerMinute },
        });
      }
      return inserted;
    });
    if (!row) throw conflict(`A ${body.period} budget for this ${body.scope} exists already: edit that one or delete it first`);
    this.forgetRules(caller.teamId);
    return (await this.views(caller.teamId, [row], now))[0]!;
  }

  /** Owner/admin: every budget of the team; member: those that apply to them (team, themselves, their keys). */
  async listBudgets(caller: Principal, now = new Date()): Promise<BudgetT[]> {
    const rows = await this.repo.listBudgets(this.db, caller.teamId);
    const keys = isTeamAdmin(caller) ? new Set<string>() : new Set(await this.repo.keyIdsOf(this.db, caller.userId));
    return this.views(
      caller.teamId,
      rows.filter((r) => mayReadBudget(caller, r, keys)),
      now,
    );
  }

  /** Change a budget's credit and/or rate limit; its scope and period stay (a different one is a new budget). */
  async updateBudget(caller: Principal, id: string, body: UpdateBudgetBodyT, now = new Date()): Promise<BudgetT> {
    requireTeamAdmin(caller);
    if (body.credits === undefined && body.requestsPerMinute === undefined) {
      throw badRequest('validation_failed', 'Nothing to change: send credits, requestsPerMinute or both', [
        { path: 'body', message: 'set credits or requestsPerMinute' },
      ]);
    }
    const row = await this.db.transaction(async (tx) => {
      const updated = await this.repo.updateBudgetLimits(tx, caller.teamId, id, body);
      if (typeof updated === 'object') {
        await bumpBudgetsRevision(tx, caller.teamId);
        await recordAudit(tx, {
          action: 'budget.update',
          actor: caller,
          target: { type: 'budget', id },
          details: { credits: updated.credits, requestsPerMinute: updated.requestsPerMinute },
        });
      }
      return updated;
    });
    if (row === 'missing') throw notFound('Budget');
    if (row === 'empty') {
      throw badRequest('validation_failed', 'A budget needs credits, requestsPerMinute or both: delete it instead of removing both limits', [
        { path: 'body/credits', message: 'set credits or requestsPerMinute' },
      ]);
    }
    this.forgetRules(caller.teamId);
    return (await this.views(caller.teamId, [row], now))[0]!;
  }

  async deleteBudget(caller: Principal, id: string): Promise<void> {
    requireTeamAdmin(caller);
    const deleted = await this.db.transaction(async (tx) => {
      const done = await this.repo.deleteBudget(tx, caller.teamId, id);
      if (done) {
        await bumpBudgetsRevision(tx, caller.teamId);
        await recordAudit(tx, { action: 'budget.delete', actor: caller, target: { type: 'budget', id } });
      }
      return done;
    });
    if (!deleted) throw notFound('Budget');
    this.forgetRules(caller.teamId);
    this.counters.forget(id);
  }

  // ---- reports -------------------------------------------------------------------------------

  async report(caller: Principal, q: UsageQueryT): Promise<UsageGroup[]> {
    return this.repo.report(this.db, this.filter(caller, q), q.groupBy);
  }

  async csv(caller: Principal, q: UsageQueryT): Promise<Readable> {
    const groups = await this.report(caller, q);
    await recordAudit(this.db, { action: 'export.usage', actor: caller, details: filterDetails(q) });
    return csvStream(
      USAGE_CSV_COLUMNS,
      groups.map((g) => USAGE_CSV_COLUMNS.map((c) => g[c])),
    );
  }

  /** The caller's own spend, and every budget that applies to this call's caller (user and key) with what it has left. */
  async me(caller: Principal, now = new Date()): Promise<MeUsageT> {
    const [spent, rows] = await Promise.all([
      this.repo.spendSince(this.db, caller.teamId, caller.userId, { day: periodStart('day', now), month: periodStart('month', now) }),
      this.repo.listBudgets(this.db, caller.teamId),
    ]);
    return {
      userId: caller.userId,
      spent,
      budgets: await this.views(
        caller.teamId,
        rows.filter((r) => applies(r, caller)),
        now,
      ),
    };
  }

  /** Budgets as the API shows them, with their spend as the counters have it. */
  private async views(teamId: string, rows: BudgetRow[], now: Date): Promise<BudgetT[]> {
    const spent = await this.counters.spentOf(teamId, rows, now);
    return rows.map((r) => budgetView(r, spent.get(r.id) ?? 0, now));
  }

  private filter(caller: Principal, q: UsageQueryT) {
    const from = q.from ? new Date(q.from) : undefined;
    const to = q.to ? new Date(q.to) : undefined;
    if (from && to && from > to)
      throw badRequest('validation_failed', 'from must not be after to', [{ path: 'querystring/from', message: 'must not be after to' }]);
    return { reader: caller, ...(from ? { from } : {}), ...(to ? { to } : {}) };
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
  if (typeof raw !== 'string' || !isUuid(raw)) throw bad(`must be ${scope === 'team' ? 'the team id' : 'an API key id'} (a UUID)`);
  return raw.toLowerCase();
}

function budgetView(r: BudgetRow, spent: number, now: Date): BudgetT {
  const start = periodStart(r.period, now);
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
