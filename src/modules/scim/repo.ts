import { and, asc, count, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { scimTokens } from '../../db/schema/scim.js';
import { users } from '../../db/schema/teams.js';
import { emailKey } from '../../security/email.js';

export type ScimUserRow = Pick<typeof users.$inferSelect, 'id' | 'name' | 'email' | 'role' | 'created' | 'deleted'>;

const userColumns = { id: users.id, name: users.name, email: users.email, role: users.role, created: users.created, deleted: users.deleted };

/**
 * SQL of `scim_tokens`, and the reads of `users` SCIM answers with (deactivated users included,
 * which the teams module's own queries leave out). Every change to a user goes through TeamsService.
 */
export class ScimRepo {
  async setToken(db: Executor, teamId: string, tokenHash: string): Promise<Date> {
    const [row] = await db
      .insert(scimTokens)
      .values({ teamId, tokenHash })
      .onConflictDoUpdate({ target: scimTokens.teamId, set: { tokenHash, created: new Date() } })
      .returning({ created: scimTokens.created });
    return row!.created;
  }

  async teamOfToken(db: Executor, tokenHash: string): Promise<string | undefined> {
    const [row] = await db.select({ teamId: scimTokens.teamId }).from(scimTokens).where(eq(scimTokens.tokenHash, tokenHash));
    return row?.teamId;
  }

  async findUser(db: Executor, teamId: string, id: number): Promise<ScimUserRow | undefined> {
    const [row] = await db
      .select(userColumns)
      .from(users)
      .where(and(eq(users.teamId, teamId), eq(users.id, id)));
    return row;
  }

  /** A page of the team's users, oldest first; `userName`: only the one with that email. */
  async listUsers(db: Executor, teamId: string, q: { userName?: string; offset: number; limit: number }): Promise<{ total: number; rows: ScimUserRow[] }> {
    const where = and(eq(users.teamId, teamId), q.userName !== undefined ? eq(users.emailKey, emailKey(q.userName)) : undefined);
    const [total] = await db.select({ n: count() }).from(users).where(where);
    const rows = await db.select(userColumns).from(users).where(where).orderBy(asc(users.id)).limit(q.limit).offset(q.offset);
    return { total: total?.n ?? 0, rows };
  }
}
