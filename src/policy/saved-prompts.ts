/**
 * The prompt library. A team prompt (scope team) is read by every member and added, changed or
 * deleted by the team's owners/admins; a personal prompt is read and changed by its author only.
 */
import { and, eq, or, type Column, type SQL } from 'drizzle-orm';
import { isTeamAdmin, type Viewer } from './principal.js';

export type PromptScope = 'team' | 'personal';
export interface SavedPromptFacts {
  teamId: string;
  userId: number;
  scope: PromptScope;
}
export interface SavedPromptColumns {
  teamId: Column;
  userId: Column;
  scope: Column;
}

export function mayReadSavedPrompt(v: Viewer, p: SavedPromptFacts): boolean {
  return p.teamId === v.teamId && (p.scope === 'team' || p.userId === v.userId);
}

export function readableSavedPromptsSql(v: Viewer, c: SavedPromptColumns): SQL {
  return and(eq(c.teamId, v.teamId), or(eq(c.scope, 'team'), eq(c.userId, v.userId)))!;
}

/** Adding a prompt of this scope. */
export function mayAddSavedPrompt(v: Viewer, scope: PromptScope): boolean {
  return scope === 'personal' || isTeamAdmin(v);
}

export function mayChangeSavedPrompt(v: Viewer, p: SavedPromptFacts): boolean {
  return mayReadSavedPrompt(v, p) && mayAddSavedPrompt(v, p.scope);
}

export function changeableSavedPromptsSql(v: Viewer, c: SavedPromptColumns): SQL {
  return isTeamAdmin(v) ? readableSavedPromptsSql(v, c) : and(eq(c.teamId, v.teamId), eq(c.scope, 'personal'), eq(c.userId, v.userId))!;
}
