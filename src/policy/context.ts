/**
 * Files added to a thread from the chat (Plus files with a thread): the workspace's contextType
 * SHARED lets every later turn of whoever reads the thread draw on them; PRIVATE only the turns of
 * the user who added each file (a team owner/admin too).
 */
import { and, eq, type Column, type SQL } from 'drizzle-orm';
import type { Viewer } from './principal.js';

export type ContextType = 'SHARED' | 'PRIVATE';

/** Of the files of a thread the caller reads: may their turn use this one? */
export function mayUseContextFile(v: Viewer, contextType: ContextType, file: { teamId: string; userId: number }): boolean {
  return file.teamId === v.teamId && (contextType === 'SHARED' || file.userId === v.userId);
}

/** `mayUseContextFile` as a condition on `plus_files`, for a workspace of this contextType. */
export function usableContextFilesSql(v: Viewer, contextType: ContextType, c: { teamId: Column; userId: Column }): SQL {
  return and(eq(c.teamId, v.teamId), contextType === 'SHARED' ? undefined : eq(c.userId, v.userId))!;
}
