/** The chat list's date groups, by a thread's last activity in the reader's own calendar days. */

export const GROUPS = ['Today', 'Yesterday', 'Last 7 days', 'Last 30 days', 'Older'] as const;
export type GroupName = (typeof GROUPS)[number];

const DAY_MS = 86_400_000;

/** Which group a moment falls in, seen from `now` (both in the reader's time zone). */
export function groupOf(updated: Date, now: Date): GroupName {
  const startOfToday = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  // whole calendar days back (a day of 23 or 25 hours still counts as one)
  const days = Math.round((startOfToday.getTime() - new Date(updated.getFullYear(), updated.getMonth(), updated.getDate()).getTime()) / DAY_MS);
  if (days <= 0) return 'Today';
  if (days === 1) return 'Yesterday';
  if (days < 7) return 'Last 7 days';
  if (days < 30) return 'Last 30 days';
  return 'Older';
}

/** Items (newest first) in their groups, the groups in GROUPS order, empty ones left out. */
export function groupByDay<T>(items: T[], updatedOf: (t: T) => string, now = new Date()): Array<{ name: GroupName; items: T[] }> {
  const by = new Map<GroupName, T[]>();
  for (const item of items) {
    const name = groupOf(new Date(updatedOf(item)), now);
    by.set(name, [...(by.get(name) ?? []), item]);
  }
  return GROUPS.filter((g) => by.has(g)).map((name) => ({ name, items: by.get(name)! }));
}
