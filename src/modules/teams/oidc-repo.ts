import { and, asc, eq, gt, lt, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { oidcLogins, userIdentities } from '../../db/schema/sign-in.js';
import { teams, users } from '../../db/schema/teams.js';
import type { UserRow } from './repo.js';
import { execute } from '../../db/driver.js';

export interface PendingLogin {
  browserHash: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

/** SQL of OpenID Connect sign-in: the sign-ins under way and the identities linked to users (db/schema/sign-in.ts). */
export class OidcRepo {
  async insertLogin(db: Executor, v: PendingLogin & { stateHash: string; ttlSeconds: number }): Promise<void> {
    const { ttlSeconds, ...row } = v;
    await db.insert(oidcLogins).values({ ...row, expires: sql`now() + make_interval(secs => ${ttlSeconds})` });
  }

  /** Remove and answer the unexpired sign-in of this state: one statement, so two callbacks with one state never both get it. */
  async takeLogin(db: Executor, stateHash: string): Promise<PendingLogin | undefined> {
    const [row] = await db
      .delete(oidcLogins)
      .where(and(eq(oidcLogins.stateHash, stateHash), gt(oidcLogins.expires, sql`now()`)))
      .returning({
        browserHash: oidcLogins.browserHash,
        nonce: oidcLogins.nonce,
        codeVerifier: oidcLogins.codeVerifier,
        redirectUri: oidcLogins.redirectUri,
      });
    return row;
  }

  async deleteExpiredLogins(db: Executor): Promise<void> {
    await db.delete(oidcLogins).where(lt(oidcLogins.expires, sql`now()`));
  }

  /** Serialises placing people by their groups across nodes (two first sign-ins must not create one team twice); released at commit. */
  async lockPlacement(db: Executor): Promise<void> {
    await execute(db, sql`select pg_advisory_xact_lock(74657203)`);
  }

  /** Every user row (deleted ones too) linked to this identity, with its team's name. */
  async usersOfIdentity(db: Executor, issuer: string, subject: string): Promise<Array<UserRow & { teamName: string }>> {
    const rows = await db
      .select({ user: users, teamName: teams.name })
      .from(userIdentities)
      .innerJoin(users, eq(users.id, userIdentities.userId))
      .innerJoin(teams, eq(teams.id, users.teamId))
      .where(and(eq(userIdentities.issuer, issuer), eq(userIdentities.subject, subject)))
      .orderBy(asc(users.id));
    return rows.map((r) => ({ ...r.user, teamName: r.teamName }));
  }

  /** Whether a user row already belongs to some identity (then it is never taken over by another). */
  async isLinked(db: Executor, userId: number): Promise<boolean> {
    const [row] = await db.select({ userId: userIdentities.userId }).from(userIdentities).where(eq(userIdentities.userId, userId));
    return row !== undefined;
  }

  async link(db: Executor, userId: number, issuer: string, subject: string): Promise<void> {
    await db.insert(userIdentities).values({ userId, issuer, subject });
  }
}
