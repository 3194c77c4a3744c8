import type { Configuration, ServerMetadata } from 'openid-client';
import type { OidcConfig, TeamRole } from '../../config.js';
import type { Db } from '../../db/client.js';
import { AppError } from '../../errors.js';
import { generateToken, hashToken } from '../../security/passwords.js';
import type { AuthService, SignedIn } from './auth-service.js';
import { OidcRepo } from './oidc-repo.js';
import type { TeamsService } from './service.js';

/** How long a request to the identity provider (discovery, token, keys, userinfo) may take. */
const PROVIDER_TIMEOUT_SECONDS = 10;

/** How long a sign-in may stay at the identity provider before its callback is refused. */
export const OIDC_LOGIN_TTL_SECONDS = 600;

type Client = typeof import('openid-client');
type ExportedJWKSCache = NonNullable<ReturnType<Client['getJwksCache']>>;

/** The `kid` of the ID token in a token endpoint's JSON answer, if any. */
function keyIdOf(body: string): string | undefined {
  try {
    const token = (JSON.parse(body) as { id_token?: unknown }).id_token;
    if (typeof token !== 'string') return undefined;
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid?: unknown };
    return typeof header.kid === 'string' ? header.kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why an OpenID Connect sign-in failed, as the code the sign-in page shows words for
 * (`/?signInError=<code>`): `not_mapped` (no group maps to a team), `no_email`, `email_taken`,
 * `denied` (the provider refused or the person cancelled), `unavailable` (the provider could not
 * be reached), `failed` (anything the callback could not verify: state, browser, code, token).
 */
export type OidcFailure = 'not_mapped' | 'no_email' | 'email_taken' | 'denied' | 'unavailable' | 'failed';

const FAILURE_KIND: Record<OidcFailure, AppError['kind']> = {
  not_mapped: 'forbidden',
  no_email: 'bad_request',
  email_taken: 'conflict',
  denied: 'unauthorized',
  unavailable: 'upstream',
  failed: 'bad_request',
};

/** A failed sign-in: `reason` for the person, the message and `cause` for the operator's log (never a token). */
export class OidcSignInError extends AppError {
  constructor(
    readonly reason: OidcFailure,
    message: string,
    cause?: unknown,
  ) {
    super(FAILURE_KIND[reason], `oidc_${reason}`, message);
    if (cause !== undefined) this.cause = cause;
  }
}

/** The groups in a claim: an array of strings or one string; a dotted name walks into objects (`realm_access.roles`). */
export function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  let v: unknown = claims[claim];
  if (v === undefined && claim.includes('.')) {
    v = claim.split('.').reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), claims);
  }
  if (typeof v === 'string') return [v];
  return Array.isArray(v) ? v.filter((g): g is string => typeof g === 'string') : [];
}

const RANK: Record<TeamRole, number> = { member: 0, admin: 1, owner: 2 };

/** The teams a person's groups map to, in the map's order; a team several groups map to gets the highest of their roles. */
export function placesOf(groups: readonly string[], teamMap: OidcConfig['teamMap']): Array<{ team: string; role: TeamRole }> {
  const mine = new Set(groups);
  const out: Array<{ team: string; role: TeamRole }> = [];
  for (const m of teamMap) {
    if (!mine.has(m.group)) continue;
    const seen = out.find((p) => p.team === m.team);
    if (!seen) out.push({ team: m.team, role: m.role });
    else if (RANK[m.role] > RANK[seen.role]) seen.role = m.role;
  }
  return out;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/**
 * OpenID Connect sign-in (authorization code with PKCE, state and nonce) through `openid-client`,
 * loaded on first use. What a sign-in under way must remember lives in `oidc_logins`, so the
 * callback may reach any node; its row is taken (deleted) by the callback, so a replay finds
 * nothing. The provider's metadata is discovered once (again after a failure); its keys are
 * cached by the library (5 minutes) and shared by the sign-ins of this node, and a token signed
 * with a key id the cached set lacks makes the library fetch the set anew (rotation).
 */
export class OidcService {
  private readonly repo = new OidcRepo();
  private discovered: Promise<Configuration> | null = null;
  /** the provider's keys as the library last fetched them (it refetches them after 5 minutes) */
  private keys: ExportedJWKSCache | undefined;

  constructor(
    private readonly db: Db,
    readonly config: OidcConfig,
    private readonly teams: TeamsService,
    private readonly auth: AuthService,
  ) {}

  private async client(): Promise<{ lib: Client; conf: Configuration }> {
    const lib = await import('openid-client');
    const insecure = new URL(this.config.issuer).protocol === 'http:'; // loopback only (config.ts)
    if (!this.discovered) {
      const found = lib.discovery(new URL(this.config.issuer), this.config.clientId, this.config.clientSecret, undefined, {
        timeout: PROVIDER_TIMEOUT_SECONDS,
        ...(insecure ? { execute: [lib.allowInsecureRequests] } : {}),
      });
      this.discovered = found;
      found.catch(() => {
        if (this.discovered === found) this.discovered = null;
      });
    }
    let metadata: ServerMetadata;
    try {
      metadata = (await this.discovered).serverMetadata();
    } catch (err) {
      throw new OidcSignInError('unavailable', `The identity provider's discovery document at ${this.config.issuer} could not be used`, err);
    }
    // A Configuration per sign-in over the discovered metadata, sharing the library's key cache.
    const conf = new lib.Configuration(metadata, this.config.clientId, this.config.clientSecret);
    conf.timeout = PROVIDER_TIMEOUT_SECONDS;
    if (insecure) lib.allowInsecureRequests(conf);
    // The ID token comes straight from the token endpoint, where OpenID Connect lets a client skip
    // its signature; we check it anyway, against the provider's published keys.
    lib.enableNonRepudiationChecks(conf);
    if (this.keys) lib.setJwksCache(conf, this.keys);
    // A token signed with a key the cached set does not hold (the provider rotated its keys):
    // the cache is emptied before the library looks, so it fetches the provider's keys anew.
    conf[lib.customFetch] = async (url, options) => {
      const res = await fetch(url, options as RequestInit);
      if (url === metadata.token_endpoint && res.ok) {
        const kid = keyIdOf(await res.clone().text());
        if (kid !== undefined && !this.keys?.jwks.keys.some((k) => k.kid === kid)) lib.setJwksCache(conf, { uat: 0, jwks: { keys: [] } });
      }
      return res;
    };
    return { lib, conf };
  }

  /** Keep the key set the library fetched or used for the next sign-in. */
  private remember(lib: Client, conf: Configuration): void {
    this.keys = lib.getJwksCache(conf) ?? this.keys;
  }

  /** Start a sign-in: the provider's authorization URL and the token of the cookie that ties the callback to this browser. */
  async begin(redirectUri: string): Promise<{ url: string; browserToken: string }> {
    const { lib, conf } = await this.client();
    const state = lib.randomState();
    const nonce = lib.randomNonce();
    const codeVerifier = lib.randomPKCECodeVerifier();
    const browserToken = generateToken();
    await this.repo.deleteExpiredLogins(this.db);
    await this.repo.insertLogin(this.db, {
      stateHash: hashToken(state),
      browserHash: hashToken(browserToken),
      nonce,
      codeVerifier,
      redirectUri,
      ttlSeconds: OIDC_LOGIN_TTL_SECONDS,
    });
    const url = lib.buildAuthorizationUrl(conf, {
      redirect_uri: redirectUri,
      scope: this.config.scopes,
      state,
      nonce,
      code_challenge: await lib.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, browserToken };
  }

  /**
   * Finish a sign-in from the callback's query and the browser's cookie: the sign-in under way is
   * taken first (whatever happens next, its state cannot be used again), then the code is
   * exchanged and the ID token verified by the library (issuer, audience, signature, expiry,
   * nonce, PKCE). The person is placed by their groups (TeamsService.placeIdentity) and signed in
   * to the first mapped team.
   */
  async finish(query: URLSearchParams, browserToken: string | null, ip: string | null = null): Promise<SignedIn> {
    const state = query.get('state');
    const pending = state ? await this.repo.takeLogin(this.db, hashToken(state)) : undefined;
    if (!state || !pending) throw new OidcSignInError('failed', 'The callback names no sign-in under way (unknown, expired or already used state)');
    if (!browserToken || hashToken(browserToken) !== pending.browserHash) {
      throw new OidcSignInError('failed', 'The callback came to a browser other than the one that started the sign-in');
    }
    if (query.has('error')) {
      throw new OidcSignInError('denied', `The identity provider refused the sign-in: ${query.get('error')} ${query.get('error_description') ?? ''}`.trim());
    }
    const { lib, conf } = await this.client();
    const current = new URL(pending.redirectUri);
    current.search = query.toString();
    let claims: Record<string, unknown>;
    let accessToken: string;
    try {
      const tokens = await lib.authorizationCodeGrant(conf, current, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = { ...tokens.claims() };
      accessToken = tokens.access_token;
      this.remember(lib, conf);
    } catch (err) {
      // Keys still not found after a fresh fetch: perhaps the provider moved them; discover anew next time.
      if ((err as { code?: string }).code === 'OAUTH_KEY_SELECTION_FAILED') this.discovered = null;
      throw new OidcSignInError('failed', 'The identity provider’s answer could not be verified', err);
    }
    const sub = String(claims.sub);
    // Some providers put groups or the email only in the userinfo answer.
    if (str(claims.email) === undefined || claims[this.config.groupsClaim] === undefined) {
      try {
        const info = await lib.fetchUserInfo(conf, accessToken, sub);
        claims = { ...info, ...claims, [this.config.groupsClaim]: claims[this.config.groupsClaim] ?? info[this.config.groupsClaim] };
      } catch (err) {
        throw new OidcSignInError('unavailable', 'The identity provider’s userinfo endpoint failed', err);
      }
    }
    const email = str(claims.email);
    const places = placesOf(groupsOf(claims, this.config.groupsClaim), this.config.teamMap);
    const emailVerified = typeof claims.email_verified === 'boolean' ? claims.email_verified : undefined;
    const name = str(claims.name) ?? str(claims.preferred_username) ?? email?.split('@')[0] ?? sub;
    const identity = { issuer: conf.serverMetadata().issuer, subject: sub, email: email ?? '', emailVerified, name: name.slice(0, 200) };
    if (places.length === 0) {
      // Groups that map to nothing now: whatever teams the person was in, they are no longer.
      await this.teams.placeIdentity({ ...identity, places: [] });
      throw new OidcSignInError('not_mapped', `No group of ${email ?? sub} is in OIDC_TEAM_MAP`);
    }
    if (!email) throw new OidcSignInError('no_email', `The identity provider sent no email for ${sub} (is the email scope granted?)`);
    let userId: number | null;
    try {
      userId = await this.teams.placeIdentity({ ...identity, email, places });
    } catch (err) {
      if (err instanceof AppError && err.code === 'oidc_email_taken') throw new OidcSignInError('email_taken', err.message);
      throw err;
    }
    if (userId === null) throw new OidcSignInError('not_mapped', `No group of ${email} is in OIDC_TEAM_MAP`);
    return this.auth.openSession(userId, { method: 'oidc', ip });
  }
}
