/**
 * Workspaces. sharingType TEAM: seen by every member of the team; PRIVATE: by its creator only
 * (a team owner/admin does not see another user's private workspace). The creator and the team's
 * owners/admins manage a workspace they see; other members only use it.
 */
import { and, eq, or, type Column, type SQL } from 'drizzle-orm';
import { isTeamAdmin, type Viewer } from './principal.js';

export type SharingType = 'TEAM' | 'PRIVATE';
export interface WorkspaceFacts {
  teamId: string;
  userId: number;
  sharingType: SharingType;
}
export interface WorkspaceColumns {
  teamId: Column;
  userId: Column;
  sharingType: Column;
}

export function canSeeWorkspace(v: Viewer, w: WorkspaceFacts): boolean {
  return w.teamId === v.teamId && (w.sharingType === 'TEAM' || w.userId === v.userId);
}

/** `canSeeWorkspace` as a condition on the workspaces table (or any relation with its columns). */
export function visibleWorkspaceSql(v: Viewer, c: WorkspaceColumns): SQL {
  return and(eq(c.teamId, v.teamId), or(eq(c.sharingType, 'TEAM'), eq(c.userId, v.userId)))!;
}

/** Of a workspace the caller sees: may they change or delete it? */
export function mayManageWorkspace(v: Viewer, w: WorkspaceFacts): boolean {
  return canSeeWorkspace(v, w) && (w.userId === v.userId || isTeamAdmin(v));
}

/** `mayManageWorkspace` in SQL. */
export function manageableWorkspaceSql(v: Viewer, c: WorkspaceColumns): SQL {
  return isTeamAdmin(v) ? visibleWorkspaceSql(v, c) : and(eq(c.teamId, v.teamId), eq(c.userId, v.userId))!;
}
