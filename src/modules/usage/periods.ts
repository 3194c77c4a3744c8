import type { BudgetPeriod } from './repo.js';

/** Periods are calendar periods in UTC: a day starts at 00:00Z, a month on its first day. */
export function periodStart(period: BudgetPeriod, now: Date): Date {
  switch (period) {
    case 'day':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    case 'month':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    case 'total':
      return new Date(0);
  }
}

/** When the period that contains `now` ends; null for `total`, which never resets. */
export function periodEnd(period: BudgetPeriod, now: Date): Date | null {
  switch (period) {
    case 'day':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    case 'month':
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    case 'total':
      return null;
  }
}

/** Rate limits count requests per calendar minute (a fixed window). */
export function minuteStart(now: Date): Date {
  return new Date(Math.floor(now.getTime() / 60_000) * 60_000);
}

/** Whole seconds from `now` until `until`, at least 1 (a `Retry-After` value). */
export function secondsUntil(until: Date, now: Date): number {
  return Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
}
