import type { Db } from '../../db/client.js';
import { AppError, badRequest, forbidden, notFound } from '../../errors.js';
import { generateToken, hashToken } from '../../security/passwords.js';
import { recordAudit, type Actor } from '../audit/record.js';
import { isTeamOwner, type Principal, type Role } from '../../policy/index.js';
import type { TeamsService } from '../teams/service.js';
import { ScimRepo, type ScimUserRow } from './repo.js';

export const SCIM_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const SCIM_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const SCIM_LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SCIM_PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** The groups SCIM sees are the team's roles: membership is the role. */
const ROLES: Role[] = ['owner', 'admin', 'member'];
const MAX_COUNT = 200;

type Json = Record<string, unknown>;

const invalid = (detail: string, scimType = 'invalidValue') => Object.assign(badRequest('scim_invalid', detail), { scimType });

function userResource(u: ScimUserRow): Json {
  return {
    schemas: [SCIM_USER],
    id: String(u.id),
    userName: u.email,
    name: { formatted: u.name },
    displayName: u.name,
    emails: [{ value: u.email, primary: true, type: 'work' }],
    active: u.deleted === null,
    groups: [{ value: u.role, display: u.role }],
    meta: { resourceType: 'User', created: u.created.toISOString(), location: `/scim/v2/Users/${u.id}` },
  };
}

/** `true`/`false`, also as the strings some identity providers send. */
function bool(v: unknown, what: string): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  throw invalid(`${what} must be true or false`);
}

function str(v: unknown, what: string, max = 320): string {
  if (typeof v !== 'string' || !v.trim() || v.length > max) throw invalid(`${what} must be a non-empty string of at most ${max} characters`);
  return v.trim();
}

/** What a SCIM User body sets: name, email (userName), active. */
function profileOf(body: Json, partial: boolean): { name?: string; email?: string; active?: boolean } {
  const out: { name?: string; email?: string; active?: boolean } = {};
  if (body.userName !== undefined || !partial) out.email = str(body.userName, 'userName');
  const name = body.name as Json | undefined;
  const formatted =
    (name && typeof name.formatted === 'string' && name.formatted) ||
    (typeof body.displayName === 'string' && body.displayName) ||
    (name && [name.givenName, name.familyName].filter((x) => typeof x === 'string' && x).join(' '));
  if (formatted) out.name = str(formatted, 'name', 200);
  else if (!partial && out.email) out.name = out.email;
  if (body.active !== undefined) out.active = bool(body.active, 'active');
  return out;
}

const idOf = (id: string): number => {
  if (!/^[1-9]\d{0,9}$/.test(id) || Number(id) > 2_147_483_647) throw notFound('User');
  return Number(id);
};

/**
 * SCIM 2.0 provisioning for one team, authenticated by the team's SCIM token: users (create,
 * read, replace, patch, deactivate) and the role groups. Every change goes through TeamsService,
 * so it is audited and a deactivation ends the user's sessions and keys at once.
 */
export class ScimService {
  private readonly repo = new ScimRepo();

  constructor(
    private readonly db: Db,
    private readonly teams: TeamsService,
  ) {}

  /** A new SCIM token for the caller's team (owner), replacing the previous one; shown once. */
  async issueToken(caller: Principal): Promise<{ token: string; created: string }> {
    if (!isTeamOwner(caller)) throw forbidden('Only a team owner may create the SCIM token');
    const token = `scim_${generateToken()}`;
    const created = await this.db.transaction(async (tx) => {
      const at = await this.repo.setToken(tx, caller.teamId, hashToken(token));
      await recordAudit(tx, { action: 'scim.token_create', actor: caller, target: { type: 'team', id: caller.teamId } });
      return at;
    });
    return { token, created: created.toISOString() };
  }

  /** The team a SCIM token belongs to, or null. */
  async teamOf(token: string): Promise<string | null> {
    return (await this.repo.teamOfToken(this.db, hashToken(token))) ?? null;
  }

  async listUsers(teamId: string, q: { filter?: string; startIndex?: string; count?: string }): Promise<Json> {
    let userName: string | undefined;
    if (q.filter !== undefined) {
      const m = /^\s*userName\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(q.filter);
      if (!m) throw invalid('Only the filter userName eq "<value>" is supported', 'invalidFilter');
      userName = m[1]!.replace(/\\(.)/g, '$1');
    }
    const startIndex = Math.max(1, Number.parseInt(q.startIndex ?? '1', 10) || 1);
    const count = Math.min(MAX_COUNT, Math.max(0, Number.parseInt(q.count ?? String(MAX_COUNT), 10) || 0));
    const { total, rows } = await this.repo.listUsers(this.db, teamId, {
      ...(userName !== undefined ? { userName } : {}),
      offset: startIndex - 1,
      limit: count,
    });
    return { schemas: [SCIM_LIST], totalResults: total, startIndex, itemsPerPage: rows.length, Resources: rows.map(userResource) };
  }

  async getUser(teamId: string, id: string): Promise<Json> {
    const u = await this.repo.findUser(this.db, teamId, idOf(id));
    if (!u) throw notFound('User');
    return userResource(u);
  }

  async createUser(teamId: string, body: Json, actor: Actor): Promise<Json> {
    const p = profileOf(body, false);
    let id: number;
    try {
      id = (await this.teams.addUser(teamId, { name: p.name!, email: p.email!, role: 'member' }, actor)).user.id;
    } catch (err) {
      if (err instanceof AppError && err.kind === 'conflict') throw Object.assign(err, { scimType: 'uniqueness' });
      throw err;
    }
    if (p.active === false) await this.teams.provision(teamId, id, { active: false }, actor);
    return this.getUser(teamId, String(id));
  }

  async replaceUser(teamId: string, id: string, body: Json, actor: Actor): Promise<Json> {
    await this.teams.provision(teamId, idOf(id), profileOf(body, false), actor);
    return this.getUser(teamId, id);
  }

  /** PatchOp: `replace`/`add` of active, userName, displayName, name.* — by path, or as one value object. */
  async patchUser(teamId: string, id: string, body: Json, actor: Actor): Promise<Json> {
    const change: Json = {};
    for (const op of operations(body)) {
      if (!/^(replace|add)$/i.test(String(op.op))) throw invalid(`Unsupported operation ${String(op.op)} on a user`);
      if (op.path === undefined) {
        if (!op.value || typeof op.value !== 'object') throw invalid('A patch without path needs an object value');
        Object.assign(change, op.value);
      } else {
        const path = String(op.path);
        if (path === 'name.formatted' || path === 'name.givenName' || path === 'name.familyName')
          change.name = { ...(change.name as Json), [path.slice(5)]: op.value };
        else if (['active', 'userName', 'displayName'].includes(path)) change[path] = op.value;
        else throw invalid(`Unsupported path ${path}`, 'invalidPath');
      }
    }
    await this.teams.provision(teamId, idOf(id), profileOf(change, true), actor);
    return this.getUser(teamId, id);
  }

  /** Deleting a user deactivates them: the account, its history and its audit trail stay. */
  async deleteUser(teamId: string, id: string, actor: Actor): Promise<void> {
    await this.teams.provision(teamId, idOf(id), { active: false }, actor);
  }

  async listGroups(teamId: string): Promise<Json> {
    const groups = await Promise.all(ROLES.map((r) => this.group(teamId, r)));
    return { schemas: [SCIM_LIST], totalResults: groups.length, startIndex: 1, itemsPerPage: groups.length, Resources: groups };
  }

  async group(teamId: string, id: string): Promise<Json> {
    const role = ROLES.find((r) => r === id);
    if (!role) throw notFound('Group');
    const { rows } = await this.repo.listUsers(this.db, teamId, { offset: 0, limit: 100_000 });
    return {
      schemas: [SCIM_GROUP],
      id: role,
      displayName: role,
      members: rows.filter((u) => u.role === role && u.deleted === null).map((u) => ({ value: String(u.id), display: u.name })),
      meta: { resourceType: 'Group', location: `/scim/v2/Groups/${role}` },
    };
  }

  /** Group membership is the role: adding someone to `admin` makes them an admin; removing them from a group makes them a member. */
  async patchGroup(teamId: string, id: string, body: Json, actor: Actor): Promise<Json> {
    const role = ROLES.find((r) => r === id);
    if (!role) throw notFound('Group');
    for (const op of operations(body)) {
      const kind = String(op.op).toLowerCase();
      if (op.path !== undefined && !String(op.path).startsWith('members')) throw invalid(`Unsupported path ${String(op.path)}`, 'invalidPath');
      if (kind === 'add' || kind === 'replace') {
        for (const m of members(op.value)) await this.teams.provision(teamId, idOf(m), { role }, actor);
      } else if (kind === 'remove') {
        const filtered = /members\[value eq "(\d+)"\]/.exec(String(op.path ?? ''));
        const ids = filtered ? [filtered[1]!] : members(op.value);
        for (const m of ids) await this.teams.provision(teamId, idOf(m), { role: 'member' }, actor);
      } else throw invalid(`Unsupported operation ${String(op.op)} on a group`);
    }
    return this.group(teamId, role);
  }
}

function operations(body: Json): Json[] {
  const ops = body.Operations;
  if (!Array.isArray(ops) || ops.length === 0 || ops.length > 100) throw invalid('A PatchOp needs 1 to 100 Operations', 'invalidSyntax');
  return ops.map((o) => {
    if (!o || typeof o !== 'object') throw invalid('Each operation is an object', 'invalidSyntax');
    return o as Json;
  });
}

function members(value: unknown): string[] {
  const list = Array.isArray(value)
    ? value
    : value && typeof value === 'object' && Array.isArray((value as Json).members)
      ? ((value as Json).members as unknown[])
      : [];
  return list.map((m) => (m && typeof m === 'object' ? String((m as Json).value) : ''));
}
