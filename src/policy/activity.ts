/**
 * A team's activity: prompt logs (one per provider call) and the usage ledger. A team's
 * owners/admins read all of the team's rows; a member only their own. The provider's own status
 * and error code in a log are shown to owners/admins only.
 */
import { and, eq, type Column, type SQL } from 'drizzle-orm';
import { isTeamAdmin, type Viewer } from './principal.js';

export interface ActivityFacts {
  teamId: string;
  userId: number;
}
export interface ActivityColumns {
  teamId: Column;
  userId: Column;
}

export function mayReadActivity(v: Viewer, row: ActivityFacts): boolean {
  return row.teamId === v.teamId && (isTeamAdmin(v) || row.userId === v.userId);
}

export function readableActivitySql(v: Viewer, c: ActivityColumns): SQL {
  return and(eq(c.teamId, v.teamId), isTeamAdmin(v) ? undefined : eq(c.userId, v.userId))!;
}

/** Prompt logs and usage follow the one rule. */
export const mayReadPromptLog = mayReadActivity;
export const readablePromptLogsSql = readableActivitySql;
export const mayReadUsage = mayReadActivity;
export const readableUsageSql = readableActivitySql;

/** Whether a log's error keeps the provider's own status and code (`[upstream …]`). */
export const mayReadUpstreamDetail = (v: Viewer): boolean => isTeamAdmin(v);

/**
 * A usage budget: owners/admins see every budget of the team; a member those that apply to them
 * (the team's, their own, their API keys'). `ownKeyIds`: the member's API keys.
 */
export function mayReadBudget(v: Viewer, b: { scope: 'team' | 'user' | 'apiKey'; scopeId: string }, ownKeyIds: ReadonlySet<string>): boolean {
  if (isTeamAdmin(v) || b.scope === 'team') return true;
  return b.scope === 'user' ? b.scopeId === String(v.userId) : ownKeyIds.has(b.scopeId);
}
