import { eq, isNotNull, or } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { teamRetention } from '../../db/schema/retention.js';

export interface RetentionRow {
  teamId: string;
  threadsDays: number | null;
  promptLogsDays: number | null;
}

/** SQL of `team_retention` (this module's table). */
export class RetentionRepo {
  async find(db: Executor, teamId: string): Promise<RetentionRow | undefined> {
    const [row] = await db.select().from(teamRetention).where(eq(teamRetention.teamId, teamId));
    return row;
  }

  async upsert(db: Executor, row: RetentionRow): Promise<RetentionRow> {
    const [saved] = await db
      .insert(teamRetention)
      .values(row)
      .onConflictDoUpdate({ target: teamRetention.teamId, set: { threadsDays: row.threadsDays, promptLogsDays: row.promptLogsDays } })
      .returning();
    return saved!;
  }

  /** Teams with any retention set. */
  async teamsWithRetention(db: Executor): Promise<string[]> {
    const rows = await db
      .select({ teamId: teamRetention.teamId })
      .from(teamRetention)
      .where(or(isNotNull(teamRetention.threadsDays), isNotNull(teamRetention.promptLogsDays)));
    return rows.map((r) => r.teamId);
  }

  /**
   * The team's settings, locked for this transaction — or undefined when another node holds them
   * (it is purging this team now: this node skips it) or they were removed.
   */
  async lockForPurge(tx: Executor, teamId: string): Promise<RetentionRow | undefined> {
    const [row] = await tx.select().from(teamRetention).where(eq(teamRetention.teamId, teamId)).for('update', { skipLocked: true });
    return row;
  }
}
