/**
 * Models. A team uses its own models and the system models (the one thing shared across teams).
 * The instance admin alone creates and changes system models; a team's owners/admins its models.
 */
import { inArray, type Column, type SQL } from 'drizzle-orm';
import { SYSTEM_SCOPE } from '../db/schema/models.js';
import { isTeamAdmin, requireInstanceAdmin, requireTeamAdmin, type Principal } from './principal.js';

type ModelCaller = Pick<Principal, 'teamId' | 'role' | 'instanceAdmin'>;

/** `teamId` null: a system model. */
export function maySeeModel(v: Pick<Principal, 'teamId'>, m: { teamId: string | null }): boolean {
  return m.teamId === null || m.teamId === v.teamId;
}

/** `maySeeModel` on `models.scope` (the team's id, or SYSTEM_SCOPE for a system model). */
export function visibleModelsSql(teamId: string, c: { scope: Column }): SQL {
  return inArray(c.scope, [teamId, SYSTEM_SCOPE]);
}

export function mayManageModel(v: ModelCaller, m: { isSystem: boolean; teamId: string | null }): boolean {
  return m.isSystem ? v.instanceAdmin : m.teamId === v.teamId && isTeamAdmin(v);
}

/** Creating or changing a model (of the caller's team, or a system one). */
export function requireManageModel(v: ModelCaller, isSystem: boolean): void {
  if (isSystem) requireInstanceAdmin(v);
  else requireTeamAdmin(v);
}
