import type { Db } from '../../db/client.js';
import { AppError } from '../../errors.js';
import { observe } from '../../observability/hooks.js';
import type { Principal } from '../../policy/index.js';
import { minuteStart, periodEnd, periodStart, secondsUntil } from './periods.js';
import { UsageRepo, type BudgetRow, type BudgetRule, type Reservation, type Settlement } from './repo.js';

/**
 * Where budgets are counted, chosen once at start-up from the database kind (services.ts):
 * PostgreSQL keeps the counters on the `budgets` row, reserved and settled by CTEs inside the
 * turn's two statements (several nodes share them); the embedded database — opened by exactly
 * one process — keeps them in that process (`InProcessCounters`, counters-memory.ts), so a
 * reservation is synchronous JavaScript and the turn's statements carry no budget SQL at all.
 * The turn pipeline sees only this interface and the `BudgetHold` it returns.
 */
export interface BudgetCounters {
  /**
   * Take a turn's reservation against `rules` (the caller's budgets that apply, never empty).
   * `historyTokens` tells what a follow-up's thread will add to the prompt (null: a new thread).
   * An in-process refusal is thrown here, as the caller's 429, before anything is stored; a SQL
   * reservation is only prepared here and refused by statement 1.
   */
  hold(caller: Principal, rules: BudgetRule[], r: Reservation, historyTokens: (() => Promise<number>) | null, now: Date): Promise<BudgetHold>;
  /** Each budget's spend in the current period (what GET /budgets and me/usage report). */
  spentOf(teamId: string, rows: BudgetRow[], now: Date): Promise<Map<string, number>>;
  /** A budget was deleted on this node: stop counting it. */
  forget(budgetId: string): void;
  /**
   * Give back the reservations of turns whose node died before settling them (their prompt logs
   * finished by the stale-log sweep); how many. Safe on every node at once.
   */
  releaseAbandoned(): Promise<number>;
}

/**
 * One turn's reservation, from before statement 1 to its end. Exactly one of `settled` or
 * `release` takes effect (the other, and any repeat, does nothing).
 */
export interface BudgetHold {
  /** What statement 1 must embed to reserve (usageSql.reserve*), or null when the hold is taken already. */
  readonly inStatement: Reservation | null;
  /** Statement 1 stored the turn; `reservedCredits` is what it reserved in SQL (0 when it embedded nothing). */
  stored(reservedCredits: number): void;
  /** What the turn reserved (known once it is stored): the most it is charged, whatever the provider reports. */
  reservedCredits(): number;
  /** What statement 2 must embed to settle (usageSql.record), or null when it settles in `settled`. */
  settlementInStatement(): Settlement | null;
  /** Statement 2 stored the answer and its ledger row, which cost `credits`. */
  settled(credits: number): void;
  /** The turn ended before statement 2 stored its answer (or statement 1 failed): give the reservation back. */
  release(): Promise<void>;
}

/** PostgreSQL: the counters are the `budgets` rows, changed only inside statements (docs/ARCHITECTURE.md). */
export class StatementCounters implements BudgetCounters {
  constructor(
    private readonly db: Db,
    private readonly repo: UsageRepo,
  ) {}

  hold(_caller: Principal, _rules: BudgetRule[], r: Reservation): Promise<BudgetHold> {
    return Promise.resolve(new StatementHold(this.db, this.repo, r));
  }

  spentOf(_teamId: string, rows: BudgetRow[], now: Date): Promise<Map<string, number>> {
    return Promise.resolve(new Map(rows.map((r) => [r.id, r.windowStart && r.windowStart >= periodStart(r.period, now) ? r.used : 0])));
  }

  forget(): void {}

  releaseAbandoned(): Promise<number> {
    return this.repo.releaseAbandoned(this.db);
  }
}

class StatementHold implements BudgetHold {
  /** null until statement 1 stored the turn (a statement that failed reserved nothing: it was undone whole) */
  private settlement: Settlement | null = null;
  private open = true;

  constructor(
    private readonly db: Db,
    private readonly repo: UsageRepo,
    readonly inStatement: Reservation,
  ) {}

  stored(credits: number): void {
    this.settlement = { reservedCredits: credits, budgets: this.inStatement.budgets.map((b) => ({ id: b.id, window: b.window })) };
  }

  reservedCredits(): number {
    return this.settlement?.reservedCredits ?? 0;
  }

  settlementInStatement(): Settlement | null {
    return this.settlement;
  }

  settled(): void {
    this.open = false;
  }

  async release(): Promise<void> {
    if (!this.open || !this.settlement) return;
    this.open = false;
    await this.repo.release(this.db, this.settlement);
  }
}

/** A budget as a refusal names it. */
export type RefusedBudget = Pick<BudgetRow, 'scope' | 'period' | 'credits' | 'requestsPerMinute'>;

/**
 * The 429 of a refused reservation: `rate_limited` when the minute's requests are used up (or the
 * budget has only a rate limit), else `budget_exceeded`, with Retry-After at the next minute or
 * period (none for a `total` budget, which never resets). `b` null: the budget is gone.
 */
export function refusalError(b: RefusedBudget | null, rateFull: boolean, now: Date): AppError {
  observe.budgetRefusal();
  const scope = b ? `${b.scope === 'apiKey' ? 'API key' : b.scope} ` : '';
  if (b && (rateFull || b.credits === null)) {
    const e = new AppError('rate_limited', 'rate_limited', `The ${scope}rate limit of ${b.requestsPerMinute} requests per minute is reached`);
    e.retryAfterSeconds = secondsUntil(new Date(minuteStart(now).getTime() + 60_000), now);
    return e;
  }
  const period = b?.period ?? 'day';
  const end = periodEnd(period, now);
  const e = new AppError(
    'rate_limited',
    'budget_exceeded',
    `The ${scope}budget of ${b?.credits ?? '?'} credits ${period === 'total' ? 'in total' : `per ${period}`} cannot cover this call` +
      (end ? '; it resets at the start of the next period' : '; it does not reset'),
  );
  if (end) e.retryAfterSeconds = secondsUntil(end, now);
  return e;
}
