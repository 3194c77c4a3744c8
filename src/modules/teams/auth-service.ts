import type { AuthConfig } from '../../config.js';
import type { Db, Executor } from '../../db/client.js';
import { AppError, badRequest } from '../../errors.js';
import { decoyHash, generateToken, hashPassword, hashToken, verifyPassword } from '../../security/passwords.js';
import { emailKey } from '../../security/email.js';
import { recordAudit } from '../audit/record.js';
import { AuthRepo, type SessionRow } from './auth-repo.js';
import { TeamsRepo } from './repo.js';
import type { Principal } from '../../policy/index.js';

/** Invite links live seven days. */
export const INVITE_TTL_SECONDS = 7 * 86_400;
/** At most this many characters of password are accepted (scrypt's cost does not grow with it; the body limit would allow megabytes). */
export const PASSWORD_MAX = 1024;
export const PASSWORD_MIN = 8;

/** A credential made before a user's transaction (hashing takes ~100 ms: never inside one). */
export type PreparedCredential = { kind: 'password'; hash: string } | { kind: 'invite'; token: string; tokenHash: string };

/** How someone signed in, for the audit log: the method and the client address. */
export interface SignInVia {
  method: 'password' | 'invite' | 'oidc';
  ip: string | null;
}

export interface SignedIn {
  principal: Principal;
  /** the session cookie's value, to send once */
  token: string;
  expires: Date;
}

function checkPasswordLength(password: string, field: string): void {
  if (password.length < PASSWORD_MIN)
    throw badRequest('password_too_short', `${field} must have at least ${PASSWORD_MIN} characters`, [
      { path: `body/${field}`, message: `must have at least ${PASSWORD_MIN} characters` },
    ]);
  if (password.length > PASSWORD_MAX)
    throw badRequest('password_too_long', `${field} must have at most ${PASSWORD_MAX} characters`, [
      { path: `body/${field}`, message: `must have at most ${PASSWORD_MAX} characters` },
    ]);
}

function tooManyAttempts(retryAfterSeconds: number): AppError {
  const e = new AppError('rate_limited', 'too_many_attempts', 'Too many failed sign-in attempts; try again later');
  e.retryAfterSeconds = retryAfterSeconds;
  return e;
}

/**
 * How many accounts (in different teams) one email can sign in to with a password: every sign-in
 * verifies exactly this many hashes, so the time it takes tells nothing of how many there are.
 */
export const SIGN_IN_ACCOUNTS_PER_EMAIL = 3;

/** The sign-in throttle's key for an email: the same key for every spelling that reaches one account. */
const throttleKeyOf = (email: string) => `email:${emailKey(email)}`;

/** Why an invite cannot be used, in words for the person holding it, and what they can do. */
function unusableInvite(found: { used: boolean; expired: boolean } | undefined): AppError {
  const detail = found?.used
    ? "This invite link has already been used. If you set your password with it, sign in with your email and that password; otherwise ask your team's admin for a new invite."
    : found?.expired
      ? "This invite link has expired (links last 7 days). Ask your team's admin for a new invite."
      : "This invite link is not valid: check that it was copied whole, or ask your team's admin for a new invite.";
  return badRequest('invalid_invite', detail);
}

/** PASSWORD_LOGIN=off: every password route answers this. */
const passwordLoginOff = () =>
  new AppError(
    'forbidden',
    'password_login_off',
    "Password sign-in is turned off on this server: sign in with the organisation's identity provider (programs keep using API keys)",
  );

const invalidCredentials = () => new AppError('unauthorized', 'invalid_credentials', 'The email or password is wrong');

/**
 * Sign-in: passwords, sessions, invites and the login throttle. Everything lives in the database
 * (no in-process state), so every node accepts a session, and an ended session or a deleted user
 * is refused by all of them on the next request.
 */
export class AuthService {
  private readonly repo = new AuthRepo();
  private readonly users = new TeamsRepo();

  constructor(
    private readonly db: Db,
    private readonly config: AuthConfig,
  ) {}

  /** What a new user gets: their password's hash, or an invite token when no password was given. */
  async prepareCredential(password: string | null | undefined): Promise<PreparedCredential> {
    if (password !== undefined && password !== null) {
      checkPasswordLength(password, 'password');
      return { kind: 'password', hash: await hashPassword(password) };
    }
    const token = generateToken();
    return { kind: 'invite', token, tokenHash: hashToken(token) };
  }

  /** Store a prepared credential in the transaction that creates the user; answers the invite token, if any. */
  async storeCredential(tx: Executor, userId: number, c: PreparedCredential): Promise<string | null> {
    if (c.kind === 'password') {
      await this.repo.setPassword(tx, userId, c.hash);
      return null;
    }
    await this.repo.insertInvite(tx, { userId, tokenHash: c.tokenHash, ttlSeconds: INVITE_TTL_SECONDS });
    return c.token;
  }

  /**
   * Check an email and password. The attempt is counted against the email's key (security/email.ts)
   * and the client address first (429 once either is over its limit, whether or not the password
   * is right). Every attempt then costs the same: exactly {@link SIGN_IN_ACCOUNTS_PER_EMAIL}
   * scrypt verifications, run together, the email's accounts padded with a decoy — so neither an
   * unknown email nor one used in several teams answers at another speed; all get the same 401.
   */
  async login(input: { email: string; password: string; address: string }): Promise<SignedIn> {
    this.requirePasswordLogin();
    const emailThrottle = throttleKeyOf(input.email);
    const addressKey = `ip:${input.address}`;
    const { failureWindowSeconds: windowS, maxFailuresPerEmail, maxFailuresPerAddress } = this.config;
    const byEmail = await this.repo.countAttempt(this.db, emailThrottle, windowS);
    const byAddress = await this.repo.countAttempt(this.db, addressKey, windowS);
    const over = [
      byEmail.attempts > maxFailuresPerEmail ? byEmail.resetInSeconds : 0,
      byAddress.attempts > maxFailuresPerAddress ? byAddress.resetInSeconds : 0,
    ];
    const via: SignInVia = { method: 'password', ip: input.address };
    if (over.some((s) => s > 0)) {
      await this.recordFailedSignIn(via, { userId: null, reason: 'throttled' });
      throw tooManyAttempts(Math.max(...over));
    }

    const tooLong = input.password.length > PASSWORD_MAX;
    const candidates = tooLong ? [] : await this.repo.findLoginCandidates(this.db, emailKey(input.email), SIGN_IN_ACCOUNTS_PER_EMAIL);
    const decoy = await decoyHash();
    const hashes = Array.from({ length: SIGN_IN_ACCOUNTS_PER_EMAIL }, (_, i) => candidates[i]?.hash ?? decoy);
    const password = input.password.slice(0, PASSWORD_MAX);
    const matches = await Promise.all(hashes.map((h) => verifyPassword(password, h)));
    // One person may be a user of several teams under one email: the oldest account whose password matches.
    const index = matches.findIndex((ok, i) => ok && i < candidates.length);
    if (tooLong || index < 0) {
      await this.recordFailedSignIn(via, { userId: candidates[0]?.userId ?? null, reason: 'invalid_credentials' });
      throw invalidCredentials();
    }
    const userId = candidates[index]!.userId;
    await this.repo.forgiveAttempt(this.db, emailThrottle, addressKey);
    await this.repo.deleteStaleAttempts(this.db, windowS);
    await this.repo.deleteExpiredSessions(this.db, userId);
    return this.openSession(userId, via);
  }

  /** Whether people may sign in with a password (PASSWORD_LOGIN). */
  get passwordLogin(): boolean {
    return this.config.passwordLogin;
  }

  /** PASSWORD_LOGIN=off: a 403 `password_login_off` for every password route (and a new user's password through the API). */
  requirePasswordLogin(): void {
    if (!this.config.passwordLogin) throw passwordLoginOff();
  }

  /**
   * Start a session for a user who has just proved who they are (password, invite, or an identity
   * provider's sign-in) and record `auth.login` in the same transaction.
   */
  async openSession(userId: number, via: SignInVia): Promise<SignedIn> {
    const token = generateToken();
    const tokenHash = hashToken(token);
    const found = await this.db.transaction(async (tx) => {
      await this.repo.insertSession(tx, { userId, tokenHash, ttlSeconds: this.config.sessionTtlSeconds });
      const session = await this.repo.findSession(tx, tokenHash);
      if (!session) return undefined;
      const p = session.principal;
      await recordAudit(tx, { action: 'auth.login', actor: { ...p, ip: via.ip }, target: { type: 'user', id: p.userId }, details: { method: via.method } });
      return session;
    });
    if (!found) throw new AppError('unauthorized', 'invalid_credentials', 'The account was removed while signing in');
    return { principal: found.principal, token, expires: found.expires };
  }

  /**
   * Record a refused sign-in (`auth.login_failed`, outcome failure). `userId`: the account it was
   * for, when one is known — the entry then belongs to that user's team; otherwise to no team (the
   * instance admin sees it). The email typed is not recorded: people type passwords into it.
   */
  async recordFailedSignIn(via: SignInVia, about: { userId: number | null; reason: string }): Promise<void> {
    // The same lookup whether or not an account was named, so a refusal takes as long either way.
    const user = await this.users.findUserById(this.db, about.userId ?? 0);
    await recordAudit(this.db, {
      action: 'auth.login_failed',
      actor: { teamId: user?.teamId ?? null, userId: null, keyId: null, ip: via.ip },
      outcome: 'failure',
      target: user ? { type: 'user', id: user.id } : null,
      details: { method: via.method, reason: about.reason },
    });
  }

  /** The live session of a cookie's token (principal and expiry), or null when unknown, expired or its user deleted. Never cached: a removal on another node counts at once. */
  findSession(token: string): Promise<SessionRow | null> {
    return this.repo.findSession(this.db, hashToken(token)).then((s) => s ?? null);
  }

  /**
   * Slide a session's expiry: once its remaining life is more than `min(1 h, ttl / 10)` short of
   * the full TTL it is pushed back to a full TTL (at most one write per session per hour).
   * Answers the expiry now in force (`session.expires` itself when nothing was written), or null
   * when the session ended meanwhile.
   */
  async slideSession(session: SessionRow): Promise<Date | null> {
    const ttlMs = this.config.sessionTtlSeconds * 1000;
    const slack = Math.min(3_600_000, ttlMs / 10);
    if (session.expires.getTime() - Date.now() > ttlMs - slack) return session.expires;
    return (await this.repo.extendSession(this.db, session.principal.sessionId!, this.config.sessionTtlSeconds)) ?? null;
  }

  /** In the transaction that deletes a user: end their sessions and open invites. */
  async forgetUser(tx: Executor, userId: number): Promise<void> {
    await this.repo.deleteUserCredentials(tx, userId);
  }

  /** End the session of a cookie's token (`auth.logout`, in the same transaction); an unknown token changes nothing. */
  async logout(token: string, ip: string | null = null): Promise<void> {
    const tokenHash = hashToken(token);
    await this.db.transaction(async (tx) => {
      const session = await this.repo.findSession(tx, tokenHash);
      await this.repo.deleteSessionByHash(tx, tokenHash);
      if (session) {
        const p = session.principal;
        await recordAudit(tx, { action: 'auth.logout', actor: { ...p, ip }, target: { type: 'user', id: p.userId } });
      }
    });
  }

  /**
   * Whom a usable invite is for. An unusable one is a 400 `invalid_invite` whose words say why
   * (used, expired, unknown) and what to do: only the link's holder can ask, and a token cannot be
   * guessed, so saying why tells nobody anything they could use.
   */
  async checkInvite(token: string): Promise<{ user: { name: string; email: string }; team: { name: string } }> {
    this.requirePasswordLogin();
    const found = await this.repo.findInvite(this.db, hashToken(token));
    if (!found || found.used || found.expired) throw unusableInvite(found);
    return { user: { name: found.name, email: found.email }, team: { name: found.teamName } };
  }

  /** Set the password of an invited user and sign them in; an unusable token is refused as checkInvite says. */
  async acceptInvite(input: { token: string; password: string }, ip: string | null = null): Promise<SignedIn> {
    this.requirePasswordLogin();
    checkPasswordLength(input.password, 'password');
    const hash = await hashPassword(input.password);
    const tokenHash = hashToken(input.token);
    const userId = await this.db.transaction(async (tx) => {
      const id = await this.repo.consumeInvite(tx, tokenHash);
      if (id === undefined) throw unusableInvite(await this.repo.findInvite(tx, tokenHash));
      await this.repo.setPassword(tx, id, hash);
      return id;
    });
    return this.openSession(userId, { method: 'invite', ip });
  }

  /**
   * Change the caller's password. The current one is checked (counted by the same throttle as
   * sign-in, under the caller's email, so a stolen session cannot guess it at leisure). Every
   * other session of the user ends; the caller's own (if they used one) and API keys stay.
   */
  async changePassword(caller: Principal, input: { currentPassword: string; newPassword: string }): Promise<void> {
    this.requirePasswordLogin();
    checkPasswordLength(input.newPassword, 'newPassword');
    const emailThrottle = throttleKeyOf(caller.email);
    const byEmail = await this.repo.countAttempt(this.db, emailThrottle, this.config.failureWindowSeconds);
    if (byEmail.attempts > this.config.maxFailuresPerEmail) throw tooManyAttempts(byEmail.resetInSeconds);
    const stored = await this.repo.findPasswordHash(this.db, caller.userId);
    const ok = stored !== undefined && input.currentPassword.length <= PASSWORD_MAX && (await verifyPassword(input.currentPassword, stored));
    if (!ok) throw badRequest('wrong_password', 'The current password is wrong', [{ path: 'body/currentPassword', message: 'is wrong' }]);
    const hash = await hashPassword(input.newPassword);
    await this.db.transaction(async (tx) => {
      await this.repo.setPassword(tx, caller.userId, hash);
      await this.repo.deleteUserSessions(tx, caller.userId, caller.sessionId);
      await recordAudit(tx, { action: 'user.update', actor: caller, target: { type: 'user', id: caller.userId }, details: { changed: 'password' } });
    });
    await this.repo.forgiveAttempt(this.db, emailThrottle, null);
  }
}
