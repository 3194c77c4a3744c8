import { TtlCache } from '../../cache.js';
import type { Db } from '../../db/client.js';
import { AppError, conflict, forbidden, notFound } from '../../errors.js';
import { generateApiKey, hashApiKey, keyPrefix } from '../../security/api-keys.js';
import { changedFields, recordAudit, type Actor } from '../audit/record.js';
import type { AuthService } from './auth-service.js';
import { OidcRepo } from './oidc-repo.js';
import { mayHandleRole, requireInstanceAdmin, requireTeamAdmin, type Principal, type Role } from '../../policy/index.js';
import { TeamsRepo, type ApiKeyRow, type TeamRow, type UserRow } from './repo.js';

export interface UserView {
  id: number;
  name: string;
  email: string;
  role: Role;
  instanceAdmin: boolean;
  created: Date;
}
export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  created: Date;
  key?: string;
}

const userView = (u: UserRow): UserView => ({
  id: u.id,
  name: u.name,
  email: u.email,
  role: u.role,
  instanceAdmin: u.instanceAdmin,
  created: u.created,
});
const keyView = (k: ApiKeyRow, key?: string): KeyView => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  created: k.created,
  ...(key ? { key } : {}),
});

/** A person as their identity provider describes them, and the teams (with roles) their groups map to, in the map's order. */
export interface IdentityPlacement {
  issuer: string;
  subject: string;
  email: string;
  /** the provider's `email_verified`; false: an existing account with this email is never taken over */
  emailVerified: boolean | undefined;
  name: string;
  places: ReadonlyArray<{ team: string; role: Role }>;
}

export class TeamsService {
  private readonly repo = new TeamsRepo();
  private readonly identities = new OidcRepo();
  private readonly cache: TtlCache<string, Principal>;

  /**
   * `keyCacheMs`: how long an API key's principal is kept in this process (every request
   * authenticates, most with a key seen moments ago). Only where this process is the database's
   * one user (services.ts): with several nodes a key revoked on one must fail on all at once.
   */
  constructor(
    private readonly db: Db,
    private readonly auth: AuthService,
    keyCacheMs: number,
  ) {
    this.cache = new TtlCache<string, Principal>(keyCacheMs);
  }

  async authenticate(key: string): Promise<Principal | null> {
    const hash = hashApiKey(key);
    const principal = await this.cache.load(hash, async () => {
      const row = await this.repo.findPrincipalByKeyHash(this.db, hash);
      return row ? { ...row, sessionId: null } : undefined;
    });
    return principal ?? null;
  }

  /**
   * On an empty database, create the first team, its owner (the instance admin, `admin.email`)
   * and an API key: `adminApiKey` when given, else a generated one, returned so the caller can
   * print it once; with `admin.password` the admin's password, else an invite token to print.
   */
  async bootstrap(
    adminApiKey: string | null,
    admin: { email: string; password: string | null } = { email: 'admin@localhost', password: null },
  ): Promise<{ created: boolean; apiKey?: string; inviteToken?: string | null }> {
    // Every start but the first: one read, no transaction, no lock, no credential made for nothing.
    if (await this.repo.anyTeam(this.db)) return { created: false };
    const credential = await this.auth.prepareCredential(admin.password);
    return this.db.transaction(async (tx) => {
      await this.repo.lockBootstrap(tx);
      if ((await this.repo.countTeams(tx)) > 0) return { created: false };
      const team = await this.repo.insertTeam(tx, 'Default team');
      const user = await this.repo.insertUser(tx, {
        teamId: team.id,
        name: 'Admin',
        email: admin.email,
        role: 'owner',
        instanceAdmin: true,
      });
      const key = adminApiKey ?? generateApiKey();
      await this.repo.insertKey(tx, { userId: user.id, name: 'bootstrap', keyHash: hashApiKey(key), prefix: keyPrefix(key) });
      await recordAudit(tx, { action: 'team.create', actor: null, teamId: team.id, target: { type: 'team', id: team.id }, details: { via: 'bootstrap' } });
      await recordAudit(tx, { action: 'user.create', actor: null, teamId: team.id, target: { type: 'user', id: user.id }, details: { role: 'owner' } });
      const inviteToken = await this.auth.storeCredential(tx, user.id, credential);
      return { created: true, apiKey: key, inviteToken };
    });
  }

  /** A new team and its owner; the owner signs in through the answered invite token. */
  async createTeam(
    caller: Principal | null,
    input: { name: string; ownerName: string; ownerEmail: string },
  ): Promise<{ team: TeamRow; owner: UserView; apiKey: string; inviteToken: string }> {
    if (caller) requireInstanceAdmin(caller);
    const credential = await this.auth.prepareCredential(null);
    return this.db.transaction(async (tx) => {
      const team = await this.repo.insertTeam(tx, input.name);
      const owner = await this.repo.insertUser(tx, {
        teamId: team.id,
        name: input.ownerName,
        email: input.ownerEmail,
        role: 'owner',
      });
      const apiKey = generateApiKey();
      await this.repo.insertKey(tx, { userId: owner.id, name: 'default', keyHash: hashApiKey(apiKey), prefix: keyPrefix(apiKey) });
      // Both entries belong to the new team (its owner reads them); the actor is who created it.
      const actor = caller ? { ...caller, teamId: team.id } : null;
      await recordAudit(tx, { action: 'team.create', actor, teamId: team.id, target: { type: 'team', id: team.id }, details: { name: team.name } });
      await recordAudit(tx, { action: 'user.create', actor, teamId: team.id, target: { type: 'user', id: owner.id }, details: { role: 'owner' } });
      const inviteToken = (await this.auth.storeCredential(tx, owner.id, credential))!;
      return { team, owner: userView(owner), apiKey, inviteToken };
    });
  }

  async createUser(
    caller: Principal,
    input: { name: string; email: string; role: Role; password?: string | undefined },
  ): Promise<{ user: UserView; apiKey: string; inviteToken: string | null }> {
    requireTeamAdmin(caller);
    if (!mayHandleRole(caller, input.role)) throw forbidden('Only an owner may create another owner');
    if (input.password !== undefined && input.password !== null) this.auth.requirePasswordLogin();
    return this.addUser(caller.teamId, input, caller);
  }

  /**
   * A user in a team (also the operator's path, CLI), with a first API key and either the given
   * password or an invite token with which they set one. `actor`: who did it (null: the operator).
   */
  async addUser(
    teamId: string,
    input: { name: string; email: string; role: Role; password?: string | undefined },
    actor: Actor | null = null,
  ): Promise<{ user: UserView; apiKey: string; inviteToken: string | null }> {
    const { password, ...fields } = input;
    const credential = await this.auth.prepareCredential(password);
    return this.db.transaction(async (tx) => {
      if (!(await this.repo.findTeam(tx, teamId))) throw notFound('Team');
      if (await this.repo.findUserByEmail(tx, teamId, fields.email)) {
        throw conflict(`A user with email ${fields.email} already exists in this team`);
      }
      const user = await this.repo.insertUser(tx, { teamId, ...fields });
      const apiKey = generateApiKey();
      await this.repo.insertKey(tx, { userId: user.id, name: 'default', keyHash: hashApiKey(apiKey), prefix: keyPrefix(apiKey) });
      const inviteToken = await this.auth.storeCredential(tx, user.id, credential);
      await recordAudit(tx, {
        action: 'user.create',
        actor,
        teamId,
        target: { type: 'user', id: user.id },
        details: { role: user.role, via: credential.kind },
      });
      return { user: userView(user), apiKey, inviteToken };
    });
  }

  /**
   * Bring a person's users in line with their groups (docs/DECISIONS.md, "Teams from
   * identity-provider groups"): in each mapped team (created when no team has that name) their user
   * is found through the identity, else a user of the team with their email is taken over (unless
   * the provider says the email is unverified, or it belongs to another identity), else created; a
   * removed one comes back; role and name follow the provider. Their users in teams no longer
   * mapped are removed, sessions ending at once. The instance admin's user is never demoted nor
   * removed this way. Answers the user of the first mapped team, or null when none is mapped.
   */
  async placeIdentity(p: IdentityPlacement): Promise<number | null> {
    const touched = new Set<number>();
    const first = await this.db.transaction(async (tx) => {
      await this.identities.lockPlacement(tx);
      const linked = await this.identities.usersOfIdentity(tx, p.issuer, p.subject);
      const kept = new Set<number>();
      let signInAs: number | null = null;
      for (const place of p.places) {
        const team = (await this.repo.findTeamByName(tx, place.team)) ?? (await this.repo.insertTeam(tx, place.team));
        let user: UserRow | undefined = linked.find((u) => u.teamId === team.id);
        if (!user) {
          const same = await this.repo.findUserByEmail(tx, team.id, p.email);
          if (same && (p.emailVerified === false || (await this.identities.isLinked(tx, same.id)))) {
            throw new AppError(
              'conflict',
              'oidc_email_taken',
              `Team ${team.name} already has a user with the email ${p.email} who does not belong to this identity-provider account`,
            );
          }
          user = same ?? (await this.repo.insertUser(tx, { teamId: team.id, name: p.name, email: p.email, role: place.role }));
          await this.identities.link(tx, user.id, p.issuer, p.subject);
        }
        if (user.deleted) await this.repo.reactivateUser(tx, user.id);
        if (user.role !== place.role && !user.instanceAdmin) await this.repo.setRole(tx, user.id, place.role);
        if (user.name !== p.name) await this.repo.setProfile(tx, user.id, { name: p.name });
        kept.add(user.id);
        touched.add(user.id);
        signInAs ??= user.id;
      }
      for (const u of linked) {
        if (kept.has(u.id) || u.deleted || u.instanceAdmin) continue;
        await this.repo.markUserDeleted(tx, u.id);
        await this.auth.forgetUser(tx, u.id);
        touched.add(u.id);
      }
      return signInAs;
    });
    this.cache.deleteWhere((principal) => touched.has(principal.userId));
    return first;
  }

  async listUsers(caller: Principal): Promise<UserView[]> {
    requireTeamAdmin(caller);
    return (await this.repo.listUsers(this.db, caller.teamId)).map(userView);
  }

  async deleteUser(caller: Principal, userId: number): Promise<void> {
    requireTeamAdmin(caller);
    const user = await this.repo.findUser(this.db, caller.teamId, userId);
    if (!user) throw notFound('User');
    if (user.id === caller.userId) throw new AppError('conflict', 'cannot_delete_self', 'You cannot delete yourself');
    if (!mayHandleRole(caller, user.role)) throw forbidden('Only an owner may delete an owner');
    await this.db.transaction(async (tx) => {
      await this.repo.markUserDeleted(tx, user.id);
      await this.auth.forgetUser(tx, user.id);
      await recordAudit(tx, { action: 'user.delete', actor: caller, target: { type: 'user', id: user.id } });
    });
    this.cache.deleteWhere((p) => p.userId === user.id);
  }

  /**
   * Change a user's role (owner/admin). Only an owner grants or takes away the owner role, and no
   * one changes their own role, so a team never loses its last owner through this route.
   */
  async changeRole(caller: Principal, userId: number, role: Role): Promise<UserView> {
    requireTeamAdmin(caller);
    const user = await this.repo.findUser(this.db, caller.teamId, userId);
    if (!user) throw notFound('User');
    if (user.id === caller.userId) throw new AppError('conflict', 'cannot_change_own_role', 'You cannot change your own role');
    if (!mayHandleRole(caller, user.role, role)) throw forbidden('Only an owner may grant or remove the owner role');
    const row = await this.db.transaction(async (tx) => {
      const changed = await this.repo.setRole(tx, user.id, role);
      await recordAudit(tx, { action: 'user.update', actor: caller, target: { type: 'user', id: user.id }, details: { role, previousRole: user.role } });
      return changed;
    });
    this.cache.deleteWhere((p) => p.userId === user.id);
    return userView(row);
  }

  /**
   * A change an identity provider makes (SCIM) to a user of `teamId`, deactivated ones included:
   * name, email, and `active` — deactivation ends the user's sessions and API keys at once, in
   * the transaction that records it; reactivation lets them sign in again (their keys stay
   * revoked). `actor`: the provisioning client.
   */
  async provision(teamId: string, userId: number, change: { name?: string; email?: string; active?: boolean; role?: Role }, actor: Actor): Promise<void> {
    await this.db.transaction(async (tx) => {
      const user = await this.repo.findUserAnyState(tx, teamId, userId);
      if (!user) throw notFound('User');
      if (change.email !== undefined && change.email.toLowerCase() !== user.email.toLowerCase()) {
        const taken = await this.repo.findUserByEmail(tx, teamId, change.email);
        if (taken) throw conflict(`A user with email ${change.email} already exists in this team`);
      }
      await this.repo.setProfile(tx, userId, {
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.email !== undefined ? { email: change.email } : {}),
      });
      const wasActive = user.deleted === null;
      const losesOwner = user.role === 'owner' && wasActive && (change.active === false || (change.role !== undefined && change.role !== 'owner'));
      if (losesOwner && (await this.repo.countOtherOwners(tx, teamId, userId)) === 0) {
        throw new AppError('conflict', 'last_owner', 'This is the team’s last owner: make someone else owner first');
      }
      if (user.instanceAdmin && change.active === false) {
        throw new AppError('conflict', 'instance_admin', 'The instance admin cannot be deactivated by provisioning');
      }
      if (change.active === false && wasActive) {
        await this.repo.markUserDeleted(tx, userId);
        await this.auth.forgetUser(tx, userId);
      }
      if (change.active === true && !wasActive) await this.repo.reactivateUser(tx, userId);
      if (change.role !== undefined && change.role !== user.role) await this.repo.setRole(tx, userId, change.role);
      await recordAudit(tx, {
        action: 'user.update',
        actor,
        teamId,
        target: { type: 'user', id: userId },
        details: {
          fields: changedFields(change),
          ...(change.active !== undefined ? { active: change.active } : {}),
          ...(change.role !== undefined ? { role: change.role } : {}),
          via: 'scim',
        },
      });
    });
    this.cache.deleteWhere((p) => p.userId === userId);
  }

  async createKey(caller: Principal, name: string): Promise<KeyView> {
    return this.addKey(caller.userId, name, caller);
  }

  /** Operator path (CLI): a new key for any user. `actor`: who did it (null: the operator). */
  async addKey(userId: number, name: string, actor: Actor | null = null): Promise<KeyView> {
    const user = await this.repo.findUserById(this.db, userId);
    if (!user) throw notFound('User');
    const key = generateApiKey();
    const row = await this.db.transaction(async (tx) => {
      const inserted = await this.repo.insertKey(tx, { userId, name, keyHash: hashApiKey(key), prefix: keyPrefix(key) });
      await recordAudit(tx, { action: 'apikey.create', actor, teamId: user.teamId, target: { type: 'apiKey', id: inserted.id }, details: { name, userId } });
      return inserted;
    });
    return keyView(row, key);
  }

  async listTeams(): Promise<Array<Pick<TeamRow, 'id' | 'name' | 'created'>>> {
    return this.repo.listTeams(this.db);
  }

  async listKeys(caller: Principal): Promise<KeyView[]> {
    return (await this.repo.listKeys(this.db, caller.userId)).map((k) => keyView(k));
  }

  async revokeKey(caller: Principal, keyId: string): Promise<void> {
    const row = await this.db.transaction(async (tx) => {
      const revoked = await this.repo.revokeKey(tx, caller.userId, keyId);
      if (revoked)
        await recordAudit(tx, { action: 'apikey.revoke', actor: caller, target: { type: 'apiKey', id: revoked.id }, details: { name: revoked.name } });
      return revoked;
    });
    if (!row) throw notFound('API key');
    this.cache.delete(row.keyHash);
  }

  /** Users of a team by id, for showing names; used by the CLI. */
  async listTeamUsers(teamId: string): Promise<UserView[]> {
    return (await this.repo.listUsers(this.db, teamId)).map(userView);
  }
}
