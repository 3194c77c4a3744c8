/** How numbers, sizes and dates read on the screens, in the language spoken (i18n/). */
import { locale, t } from '../i18n';

export function formatBytes(n: number): string {
  const one = (x: number) => x.toLocaleString(locale(), { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${one(n / 1024)} KB`;
  return `${one(n / 1024 / 1024)} MB`;
}

export const formatNumber = (n: number | null | undefined): string => (n == null ? '—' : n.toLocaleString(locale()));

/** A number with exactly `digits` decimals, in the language's notation (0.54 / 0,54). */
export const formatDecimal = (n: number, digits: number): string =>
  n.toLocaleString(locale(), { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: false });

export function formatDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(locale(), { dateStyle: 'medium', timeStyle: 'short' });
}

/** A `<input type="date">` value (local day) as the ISO instant of its start; `end`: the next day's start. */
export function dayToIso(day: string, end = false): string | undefined {
  if (!day) return undefined;
  const d = new Date(`${day}T00:00:00`);
  if (Number.isNaN(d.getTime())) return undefined;
  if (end) d.setDate(d.getDate() + 1);
  return d.toISOString();
}

export function isTeamAdmin(role: string): boolean {
  return role === 'owner' || role === 'admin';
}

/** A team role in people's words. */
export function roleName(role: string): string {
  return role === 'owner' ? t('role.owner') : role === 'admin' ? t('role.admin') : t('role.member');
}
