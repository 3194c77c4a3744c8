/**
 * Plus entries. isPublic true: read (read-only) by every member of the team; false: by its
 * creator and the team's owners/admins. Only the creator or a team owner/admin changes an entry —
 * its fields, files, evaluation set — or deletes it.
 */
import { and, eq, or, type Column, type SQL } from 'drizzle-orm';
import { forbidden } from '../errors.js';
import { isTeamAdmin, type Viewer } from './principal.js';

export interface PlusFacts {
  teamId: string;
  userId: number;
  isPublic: boolean;
}
export interface PlusColumns {
  teamId: Column;
  userId: Column;
  isPublic: Column;
}

export function mayReadPlus(v: Viewer, e: PlusFacts): boolean {
  return e.teamId === v.teamId && (e.isPublic || e.userId === v.userId || isTeamAdmin(v));
}

export function visiblePlusSql(v: Viewer, c: PlusColumns): SQL {
  return and(eq(c.teamId, v.teamId), isTeamAdmin(v) ? undefined : or(eq(c.isPublic, true), eq(c.userId, v.userId)))!;
}

/**
 * `visiblePlusSql` as the text of a prepared statement (plus/repo.ts, findWithLexemes): `e` the
 * alias of plus_entries; the parameters hold the team, whether the caller is a team admin (see
 * `isTeamAdmin`) and the user.
 */
export function visiblePlusText(e: string, p: { team: string; admin: string; user: string }): string {
  return `${e}.team_id = ${p.team}::uuid and (${p.admin}::boolean or ${e}.is_public or ${e}.user_id = ${p.user}::int)`;
}

/** Entries every member of the team reads, whoever asks (a shared thread names only these). */
export function everyMemberReadsPlus(e: PlusFacts, teamId: string): boolean {
  return e.teamId === teamId && e.isPublic;
}

export function everyMemberReadsPlusSql(teamId: string, c: PlusColumns): SQL {
  return and(eq(c.teamId, teamId), eq(c.isPublic, true))!;
}

export function mayChangePlus(v: Viewer, e: Omit<PlusFacts, 'isPublic'>): boolean {
  return e.teamId === v.teamId && (e.userId === v.userId || isTeamAdmin(v));
}

export function changeablePlusSql(v: Viewer, c: PlusColumns): SQL {
  return and(eq(c.teamId, v.teamId), isTeamAdmin(v) ? undefined : eq(c.userId, v.userId))!;
}

export function requireChangePlus(v: Viewer, e: Omit<PlusFacts, 'isPublic'>): void {
  if (!mayChangePlus(v, e)) throw forbidden('Only the creator of this Plus entry or a team owner/admin may change it');
}
