/** How numbers, sizes and dates read on the admin screens. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export const formatNumber = (n: number | null | undefined): string => (n == null ? '—' : n.toLocaleString('en-US'));

export function formatDate(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
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
