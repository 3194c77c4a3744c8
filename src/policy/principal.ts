/**
 * Who is calling, and the role rules every other rule builds on. A team has users with the role
 * owner, admin or member; nothing crosses teams (but the system models, models/). The instance
 * admin is a flag on one user, above every team.
 */
import { forbidden } from '../errors.js';

export type Role = 'owner' | 'admin' | 'member';

export interface Principal {
  /** the API key used, or null when signed in with a session cookie */
  keyId: string | null;
  /** the session used, or null when called with an API key */
  sessionId: string | null;
  userId: number;
  name: string;
  email: string;
  role: Role;
  instanceAdmin: boolean;
  teamId: string;
  teamName: string;
  /** the request's client address (set by the HTTP layer for the audit log; absent off HTTP) */
  ip?: string | null;
  /**
   * The team's budgets revision as the key's read found it (absent for a session): a turn may use
   * the budget rules its node read at that revision (modules/usage, UsageService.teamRules).
   */
  budgetsRevision?: number;
}

/** What the visibility rules read of the caller: their team, their user id and their role. */
export type Viewer = Pick<Principal, 'teamId' | 'userId' | 'role'>;

/** A team's owners and admins manage the team (its users, models, settings) and see all of its activity. */
export const isTeamAdmin = (p: Pick<Principal, 'role'>): boolean => p.role === 'owner' || p.role === 'admin';

export function requireTeamAdmin(p: Pick<Principal, 'role'>): void {
  if (!isTeamAdmin(p)) throw forbidden('Only a team owner or admin may do this');
}

export const isTeamOwner = (p: Pick<Principal, 'role'>): boolean => p.role === 'owner';

/** The instance admin alone creates teams and system models. */
export function requireInstanceAdmin(p: Pick<Principal, 'instanceAdmin'>): void {
  if (!p.instanceAdmin) throw forbidden('Only the instance admin may do this');
}

/** Only an owner makes, unmakes or removes an owner (an admin manages admins and members). */
export function mayHandleRole(p: Pick<Principal, 'role'>, ...roles: Role[]): boolean {
  return isTeamOwner(p) || !roles.includes('owner');
}
