import { and, asc, eq, gt, isNull, lt, ne, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { loginThrottle, sessions, userInvites, userPasswords } from '../../db/schema/sign-in.js';
import { teams, users } from '../../db/schema/teams.js';
import type { Principal } from '../../policy/index.js';

/** The columns of a principal, read with the user and team in one statement. */
const principalColumns = {
  userId: users.id,
  name: users.name,
  email: users.email,
  role: users.role,
  instanceAdmin: users.instanceAdmin,
  teamId: teams.id,
  teamName: teams.name,
};

export interface SessionRow {
  principal: Principal;
  expires: Date;
}

/** SQL of sign-in: passwords, sessions, invites and the login throttle (tables of db/schema/sign-in.ts). */
export class AuthRepo {
  /** Live users whose email has this key (security/email.ts; any team) and their password hash, oldest first. */
  async findLoginCandidates(db: Executor, key: string, limit: number): Promise<Array<{ userId: number; hash: string }>> {
    return db
      .select({ userId: users.id, hash: userPasswords.hash })
      .from(users)
      .innerJoin(userPasswords, eq(userPasswords.userId, users.id))
      .where(and(eq(users.emailKey, key), isNull(users.deleted)))
      .orderBy(asc(users.id))
      .limit(limit);
  }

  async findPasswordHash(db: Executor, userId: number): Promise<string | undefined> {
    const [row] = await db.select({ hash: userPasswords.hash }).from(userPasswords).where(eq(userPasswords.userId, userId));
    return row?.hash;
  }

  async setPassword(db: Executor, userId: number, hash: string): Promise<void> {
    await db
      .insert(userPasswords)
      .values({ userId, hash })
      .onConflictDoUpdate({ target: userPasswords.userId, set: { hash, updated: sql`now()` } });
  }

  async insertSession(db: Executor, v: { userId: number; tokenHash: string; ttlSeconds: number }): Promise<{ id: string; expires: Date }> {
    const [row] = await db
      .insert(sessions)
      .values({ userId: v.userId, tokenHash: v.tokenHash, expires: sql`now() + make_interval(secs => ${v.ttlSeconds})` })
      .returning({ id: sessions.id, expires: sessions.expires });
    return row!;
  }

  /** The session of this token hash, if unexpired and its user not deleted; never cached (a removal is seen at once). */
  async findSession(db: Executor, tokenHash: string): Promise<SessionRow | undefined> {
    const [row] = await db
      .select({ sessionId: sessions.id, expires: sessions.expires, ...principalColumns })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .innerJoin(teams, eq(teams.id, users.teamId))
      .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expires, sql`now()`), isNull(users.deleted)));
    if (!row) return undefined;
    const { sessionId, expires, ...p } = row;
    return { principal: { ...p, keyId: null, sessionId }, expires };
  }

  /** Slide the expiry; the new one, or undefined if the session ended meanwhile. */
  async extendSession(db: Executor, sessionId: string, ttlSeconds: number): Promise<Date | undefined> {
    const [row] = await db
      .update(sessions)
      .set({ expires: sql`now() + make_interval(secs => ${ttlSeconds})` })
      .where(and(eq(sessions.id, sessionId), gt(sessions.expires, sql`now()`)))
      .returning({ expires: sessions.expires });
    return row?.expires;
  }

  async deleteSessionByHash(db: Executor, tokenHash: string): Promise<void> {
    await db.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
  }

  /** End every session of a user but `keep` (the caller's own, when changing the password from it). */
  async deleteUserSessions(db: Executor, userId: number, keep: string | null): Promise<void> {
    await db.delete(sessions).where(keep ? and(eq(sessions.userId, userId), ne(sessions.id, keep)) : eq(sessions.userId, userId));
  }

  /** A deleted user: their sessions and open invites go (the session query refuses them anyway). */
  async deleteUserCredentials(db: Executor, userId: number): Promise<void> {
    await db.delete(sessions).where(eq(sessions.userId, userId));
    await db.delete(userInvites).where(eq(userInvites.userId, userId));
  }

  async deleteExpiredSessions(db: Executor, userId: number): Promise<void> {
    await db.delete(sessions).where(and(eq(sessions.userId, userId), lt(sessions.expires, sql`now()`)));
  }

  async insertInvite(db: Executor, v: { userId: number; tokenHash: string; ttlSeconds: number }): Promise<void> {
    await db.insert(userInvites).values({ userId: v.userId, tokenHash: v.tokenHash, expires: sql`now() + make_interval(secs => ${v.ttlSeconds})` });
  }

  /** An invite of a live user, whether used or not, and whether it has expired; undefined when unknown or the user is gone. */
  async findInvite(db: Executor, tokenHash: string): Promise<{ name: string; email: string; teamName: string; used: boolean; expired: boolean } | undefined> {
    const [row] = await db
      .select({
        name: users.name,
        email: users.email,
        teamName: teams.name,
        used: sql<boolean>`${userInvites.used} is not null`,
        expired: sql<boolean>`${userInvites.expires} <= now()`,
      })
      .from(userInvites)
      .innerJoin(users, eq(users.id, userInvites.userId))
      .innerJoin(teams, eq(teams.id, users.teamId))
      .where(and(eq(userInvites.tokenHash, tokenHash), isNull(users.deleted)));
    return row;
  }

  /** Use an invite: marks it used and answers its live user, or undefined when unknown, used, expired or the user is gone. */
  async consumeInvite(db: Executor, tokenHash: string): Promise<number | undefined> {
    const [row] = await db
      .update(userInvites)
      .set({ used: sql`now()` })
      .where(
        and(
          eq(userInvites.tokenHash, tokenHash),
          isNull(userInvites.used),
          gt(userInvites.expires, sql`now()`),
          sql`exists (select 1 from ${users} where ${users.id} = ${userInvites.userId} and ${users.deleted} is null)`,
        ),
      )
      .returning({ userId: userInvites.userId });
    return row?.userId;
  }

  /**
   * Count one attempt against `key` in the current window (a window older than `windowSeconds`
   * starts over) and answer the count and the seconds until the window ends. One statement, so
   * concurrent attempts on any node are counted exactly.
   */
  async countAttempt(db: Executor, key: string, windowSeconds: number): Promise<{ attempts: number; resetInSeconds: number }> {
    const fresh = sql`${loginThrottle.windowStart} <= now() - make_interval(secs => ${windowSeconds})`;
    const [row] = await db
      .insert(loginThrottle)
      .values({ key, windowStart: sql`now()`, attempts: 1 })
      .onConflictDoUpdate({
        target: loginThrottle.key,
        set: {
          attempts: sql`case when ${fresh} then 1 else ${loginThrottle.attempts} + 1 end`,
          windowStart: sql`case when ${fresh} then now() else ${loginThrottle.windowStart} end`,
        },
      })
      .returning({
        attempts: loginThrottle.attempts,
        resetInSeconds: sql<number>`ceil(extract(epoch from (${loginThrottle.windowStart} + make_interval(secs => ${windowSeconds}) - now())))::int`,
      });
    return { attempts: row!.attempts, resetInSeconds: Math.max(1, Number(row!.resetInSeconds)) };
  }

  /** A successful sign-in: the email's failures are forgiven, and the address's attempt is not held against it. */
  async forgiveAttempt(db: Executor, emailKey: string, addressKey: string | null): Promise<void> {
    await db.delete(loginThrottle).where(eq(loginThrottle.key, emailKey));
    if (addressKey === null) return;
    await db
      .update(loginThrottle)
      .set({ attempts: sql`greatest(${loginThrottle.attempts} - 1, 0)` })
      .where(eq(loginThrottle.key, addressKey));
  }

  async deleteStaleAttempts(db: Executor, windowSeconds: number): Promise<void> {
    await db.delete(loginThrottle).where(lt(loginThrottle.windowStart, sql`now() - make_interval(secs => ${windowSeconds})`));
  }
}
