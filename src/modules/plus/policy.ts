/**
 * Who may do what with a Plus entry (docs/API.md, Tenancy): reading is the repository's `visible`
 * (public entries: the team; private ones: their creator and the team's owners/admins); changing
 * an entry — its fields, files, evaluation set — is for its creator and the team's owners/admins.
 */
import { forbidden } from '../../errors.js';
import { isTeamAdmin, type Principal } from '../teams/service.js';
import type { PlusRow } from './repo.js';

export function mayChange(caller: Principal, entry: Pick<PlusRow, 'userId'>): boolean {
  return entry.userId === caller.userId || isTeamAdmin(caller);
}

export function requireChange(caller: Principal, entry: Pick<PlusRow, 'userId'>): void {
  if (!mayChange(caller, entry)) throw forbidden('Only the creator of this Plus entry or a team owner/admin may change it');
}
