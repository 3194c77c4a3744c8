/**
 * The audit log: a team's owners/admins read their team's entries; the instance admin every
 * entry (also those of no team, such as failed sign-ins for unknown emails); a member none.
 */
import { eq, sql, type Column, type SQL } from 'drizzle-orm';
import { isTeamAdmin, type Principal } from './principal.js';

export type AuditReader = Pick<Principal, 'teamId' | 'role' | 'instanceAdmin'>;

export function mayReadAuditLog(r: Omit<AuditReader, 'teamId'>): boolean {
  return r.instanceAdmin || isTeamAdmin(r);
}

export function mayReadAuditEntry(r: AuditReader, entry: { teamId: string | null }): boolean {
  return r.instanceAdmin || (isTeamAdmin(r) && entry.teamId === r.teamId);
}

export function readableAuditSql(r: AuditReader, c: { teamId: Column }): SQL {
  return r.instanceAdmin ? sql`true` : isTeamAdmin(r) ? eq(c.teamId, r.teamId) : sql`false`;
}
