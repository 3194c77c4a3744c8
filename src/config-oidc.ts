/**
 * OpenID Connect's part of the configuration (config.ts): its variables checked together, and
 * OIDC_TEAM_MAP parsed entry by entry.
 */
import { Type, type Static } from 'typebox';
import { ConfigError } from './config-error.js';

/** The OIDC_* variables, part of config.ts's environment schema. */
export const OIDC_ENV = {
  OIDC_ISSUER: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  OIDC_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  OIDC_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  OIDC_NAME: Type.String({ minLength: 1, maxLength: 60, default: 'SSO' }),
  OIDC_SCOPES: Type.String({ minLength: 1, default: 'openid email profile' }),
  OIDC_GROUPS_CLAIM: Type.String({ minLength: 1, default: 'groups' }),
  OIDC_TEAM_MAP: Type.Optional(Type.String({ minLength: 1 })),
};
/** The OIDC_* variables as the schema reads them (defaults applied). */
export type OidcEnv = Static<ReturnType<typeof Type.Object<typeof OIDC_ENV>>>;

export type TeamRole = 'owner' | 'admin' | 'member';

/** OpenID Connect sign-in (modules/teams/oidc-service.ts). */
export interface OidcConfig {
  /** the issuer as the provider names itself (its discovery document must say the same) */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** the button's words: "Sign in with <name>" */
  readonly name: string;
  readonly scopes: string;
  /** the ID token's (or userinfo's) claim that lists the person's groups */
  readonly groupsClaim: string;
  /** group → team name and role, in the order written (the first mapped team is the one signed in to) */
  readonly teamMap: ReadonlyArray<{ readonly group: string; readonly team: string; readonly role: TeamRole }>;
}

const ROLES: readonly TeamRole[] = ['member', 'admin', 'owner'];

/**
 * OpenID Connect: all of OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET or none; OIDC_TEAM_MAP
 * required with them and checked entry by entry, so a typo stops the start instead of refusing
 * people later. A plain-HTTP issuer only on loopback (a provider on this machine, tests).
 */
export function oidcConfig(e: OidcEnv): OidcConfig | null {
  const set = { OIDC_ISSUER: e.OIDC_ISSUER, OIDC_CLIENT_ID: e.OIDC_CLIENT_ID, OIDC_CLIENT_SECRET: e.OIDC_CLIENT_SECRET };
  const missing = Object.entries(set)
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);
  if (missing.length === 3) {
    if (e.OIDC_TEAM_MAP !== undefined)
      throw new ConfigError('Invalid configuration:\n  OIDC_TEAM_MAP: is set, but OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are not');
    return null;
  }
  const bad = (why: string) => new ConfigError(`Invalid configuration:\n  ${why}`);
  if (missing.length > 0) throw bad(`${missing.join(', ')}: must be set too (OpenID Connect needs OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET)`);
  let issuer: URL;
  try {
    issuer = new URL(e.OIDC_ISSUER!);
  } catch {
    throw bad('OIDC_ISSUER: is not a URL');
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);
  if (issuer.protocol !== 'https:' && !loopback) throw bad('OIDC_ISSUER: must be an https:// URL (plain http only for a provider on this machine)');
  if (!e.OIDC_SCOPES.split(/\s+/).includes('openid')) throw bad('OIDC_SCOPES: must include openid');
  return Object.freeze({
    issuer: e.OIDC_ISSUER!,
    clientId: e.OIDC_CLIENT_ID!,
    clientSecret: e.OIDC_CLIENT_SECRET!,
    name: e.OIDC_NAME,
    scopes: e.OIDC_SCOPES.trim(),
    groupsClaim: e.OIDC_GROUPS_CLAIM,
    teamMap: parseTeamMap(e.OIDC_TEAM_MAP),
  });
}

const TEAM_MAP_SHAPE = '{"<group>": {"team": "<team name>", "role": "member"|"admin"|"owner"}}';

/** OIDC_TEAM_MAP: a JSON object of group → {team, role}; every mistake named with its group. */
export function parseTeamMap(raw: string | undefined): OidcConfig['teamMap'] {
  const bad = (why: string) => new ConfigError(`Invalid configuration:\n  OIDC_TEAM_MAP: ${why}; expected ${TEAM_MAP_SHAPE}`);
  if (raw === undefined) throw bad('must be set when OpenID Connect is on (nobody could sign in without it)');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw bad(`is not JSON (${(err as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw bad('must be a JSON object');
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (entries.length === 0) throw bad('maps no group');
  const problems: string[] = [];
  const out = entries.map(([group, v]) => {
    const o = (v ?? {}) as { team?: unknown; role?: unknown };
    const extra = typeof v === 'object' && v !== null ? Object.keys(v).filter((k) => k !== 'team' && k !== 'role') : [];
    if (typeof v !== 'object' || v === null || Array.isArray(v)) problems.push(`"${group}" must map to an object`);
    else if (typeof o.team !== 'string' || o.team.trim() === '' || o.team.length > 200) problems.push(`"${group}".team must be a team name (1-200 characters)`);
    else if (!ROLES.includes(o.role as TeamRole)) problems.push(`"${group}".role must be "member", "admin" or "owner"`);
    else if (extra.length > 0) problems.push(`"${group}" has unknown field ${extra.map((k) => `"${k}"`).join(', ')}`);
    if (group.trim() === '') problems.push('a group name is empty');
    return Object.freeze({ group, team: typeof o.team === 'string' ? o.team.trim() : '', role: o.role as TeamRole });
  });
  if (problems.length > 0) throw bad(problems.join('; '));
  return Object.freeze(out);
}
