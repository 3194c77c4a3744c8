import type { Db } from '../../db/client.js';
import type { Principal } from '../../policy/index.js';
import { refusalError, type BudgetCounters, type BudgetHold } from './counters.js';
import { minuteStart, periodStart } from './periods.js';
import { reservedCredits, type BudgetRow, type BudgetRule, type Reservation, type Settlement, type UsageRepo } from './repo.js';

/** One budget's counters: the spend (settled + reserved in flight) of the period that began at `window`, the requests of `minute`. */
interface Counter {
  window: number;
  spent: number;
  minute: number;
  requests: number;
}

/**
 * The embedded database's budget counters, kept in the one process that opens it (PGlite cannot
 * be shared): a reservation is a check and an addition in JavaScript, atomic on the event loop,
 * and settlement a subtraction after statement 2 — no budget SQL in a turn's statements.
 *
 * A budget's counter is built the first time it is needed after start-up (a turn, GET /budgets,
 * me/usage): its period's spend is the sum of the `usage_ledger` rows in its scope since the
 * later of the period's start and the budget's creation — the ledger rows are written with the
 * answers, so a restart loses no settled spend, and reservations of calls the old process did
 * not finish are simply gone. Rate-limit minutes start at zero after a restart. Limits are read
 * from the rules on every turn, so a changed limit counts at once and the spend is kept; a
 * deleted budget's counter is dropped; a new budget starts from the ledger since its creation (0).
 */
export class InProcessCounters implements BudgetCounters {
  private readonly counters = new Map<string, Counter>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly repo: UsageRepo,
  ) {}

  async hold(caller: Principal, rules: BudgetRule[], r: Reservation, historyTokens: (() => Promise<number>) | null, now: Date): Promise<BudgetHold> {
    const [hist] = await Promise.all([historyTokens ? historyTokens() : 0, this.load(caller.teamId, rules)]);
    // From here on synchronous: no other turn can run between the check and the addition.
    const credits = reservedCredits(r, hist);
    const minute = minuteStart(now).getTime();
    // A budget deleted while this turn waited has no counter any more: it no longer applies.
    const on = rules.flatMap((rule, i) => {
      const window = r.budgets[i]!.window.getTime();
      const c = this.current(rule.id, window, minute);
      return c ? [{ rule, c, window }] : [];
    });
    for (const { rule, c } of on) {
      if (rule.requestsPerMinute !== null && c.requests + 1 > rule.requestsPerMinute) throw refusalError(rule, true, now);
      if (rule.credits !== null && credits > 0 && c.spent + credits > rule.credits + 1e-9) throw refusalError(rule, false, now);
    }
    for (const { c } of on) {
      c.spent += credits;
      c.requests += 1;
    }
    return new InProcessHold(on, credits);
  }

  async spentOf(teamId: string, rows: BudgetRow[], now: Date): Promise<Map<string, number>> {
    await this.load(teamId, rows);
    return new Map(rows.map((r) => [r.id, this.current(r.id, periodStart(r.period, now).getTime(), minuteStart(now).getTime())?.spent ?? 0]));
  }

  forget(budgetId: string): void {
    this.counters.delete(budgetId);
  }

  /** Nothing to give back: a dead process took its reservations with it (the restart rebuilds from the ledger). */
  releaseAbandoned(): Promise<number> {
    return Promise.resolve(0);
  }

  /** The counter rolled forward to `window` / `minute` (a new period or minute starts at zero, as the SQL UPDATE resets). */
  private current(id: string, window: number, minute: number): Counter | undefined {
    const c = this.counters.get(id);
    if (!c) return undefined;
    if (c.window < window) {
      c.window = window;
      c.spent = 0;
    }
    if (c.minute < minute) {
      c.minute = minute;
      c.requests = 0;
    }
    return c;
  }

  /** Build the counters of `rules` not counted yet in this process, from the ledger, in one query. */
  private async load(teamId: string, rules: ReadonlyArray<BudgetRule>): Promise<void> {
    const missing = rules.filter((r) => !this.counters.has(r.id));
    if (missing.length === 0) return;
    const fresh = missing.filter((r) => !this.loading.has(r.id));
    if (fresh.length > 0) {
      const now = new Date();
      const since = fresh.map((r) => ({ ...r, since: new Date(Math.max(periodStart(r.period, now).getTime(), r.created.getTime())) }));
      const done = this.repo
        .spendByBudget(this.db, teamId, since)
        .then((spent) => {
          for (const r of since) {
            if (!this.counters.has(r.id))
              this.counters.set(r.id, { window: periodStart(r.period, now).getTime(), spent: spent.get(r.id) ?? 0, minute: 0, requests: 0 });
          }
        })
        .finally(() => {
          for (const r of fresh) this.loading.delete(r.id);
        });
      for (const r of fresh) this.loading.set(r.id, done);
    }
    await Promise.all(missing.map((r) => this.loading.get(r.id)));
  }
}

class InProcessHold implements BudgetHold {
  readonly inStatement = null;
  private open = true;

  constructor(
    private readonly on: Array<{ c: Counter; window: number }>,
    private readonly credits: number,
  ) {}

  stored(): void {}

  reservedCredits(): number {
    return this.credits;
  }

  settlementInStatement(): Settlement | null {
    return null;
  }

  /** Correct each reservation to the real cost — in the period it was taken in (a new period has started from zero). */
  settled(credits: number): void {
    this.close(credits - this.credits);
  }

  release(): Promise<void> {
    this.close(-this.credits);
    return Promise.resolve();
  }

  private close(delta: number): void {
    if (!this.open) return;
    this.open = false;
    for (const { c, window } of this.on) if (c.window === window) c.spent = Math.max(0, c.spent + delta);
  }
}
