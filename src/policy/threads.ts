/**
 * Chat threads: a thread is read by whoever sees its workspace (workspaces.ts) when the
 * workspace's chatHistoryType is TEAM; when it is USER, each user reads only the threads they
 * started (a team owner/admin too). Of the threads they read, the user who started one and the
 * team's owners/admins rename, pin and delete it.
 */
import { and, eq, ne, or, type Column, type SQL } from 'drizzle-orm';
import { isTeamAdmin, type Viewer } from './principal.js';
import { canSeeWorkspace, visibleWorkspaceSql, type WorkspaceColumns, type WorkspaceFacts } from './workspaces.js';

export type ChatHistoryType = 'TEAM' | 'USER';
export interface ThreadWorkspace extends WorkspaceFacts {
  id: string;
  chatHistoryType: ChatHistoryType;
}
export interface ThreadFacts {
  teamId: string;
  workspaceId: string;
  userId: number;
}
export interface ThreadColumns {
  teamId: Column;
  userId: Column;
}

/** Which threads of one workspace a user reads, as the chat repository queries them. */
export interface ThreadScope {
  /** the workspace's team: workspace ids are unique per team */
  teamId: string;
  workspaceId: string;
  /** set when the workspace's history is per user */
  onlyUserId?: number;
}

/** The rule for one workspace the caller sees (already loaded): all its threads, or only their own. */
export function threadScope(v: Viewer, ws: ThreadWorkspace): ThreadScope {
  return ws.chatHistoryType === 'USER' ? { teamId: ws.teamId, workspaceId: ws.id, onlyUserId: v.userId } : { teamId: ws.teamId, workspaceId: ws.id };
}

export function mayReadThread(v: Viewer, ws: ThreadWorkspace, t: ThreadFacts): boolean {
  const s = threadScope(v, ws);
  return canSeeWorkspace(v, ws) && t.teamId === s.teamId && t.workspaceId === s.workspaceId && (s.onlyUserId === undefined || t.userId === s.onlyUserId);
}

/**
 * `mayReadThread` for a query over many threads: a condition on `chat_threads` (`t`) joined to
 * its workspaces row (`w`, by team and id), as conversation search reads them.
 */
export function readableThreadsSql(v: Viewer, t: ThreadColumns, w: WorkspaceColumns & { chatHistoryType: Column }): SQL {
  return and(eq(t.teamId, v.teamId), visibleWorkspaceSql(v, w), or(ne(w.chatHistoryType, 'USER'), eq(t.userId, v.userId)))!;
}

/** Of a thread the caller reads: may they rename, pin or delete it? */
export function mayChangeThread(v: Viewer, t: Pick<ThreadFacts, 'userId'>): boolean {
  return t.userId === v.userId || isTeamAdmin(v);
}

/** `mayReadThread` and `mayChangeThread` together, in SQL. */
export function changeableThreadsSql(v: Viewer, t: ThreadColumns, w: WorkspaceColumns & { chatHistoryType: Column }): SQL {
  return and(readableThreadsSql(v, t, w), isTeamAdmin(v) ? undefined : eq(t.userId, v.userId))!;
}
