import { and, asc, eq, ne, gte, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { models, teamModels } from '../../db/schema/models.js';

export type ModelRow = typeof models.$inferSelect;
export type ModelInsert = typeof models.$inferInsert;
export type ModelWithMembership = ModelRow & { inTeam: boolean };

export class ModelsRepo {
  private membership(teamId: string) {
    return sql<boolean>`exists (select 1 from team_models tm where tm.model_id = "models"."id" and tm.team_id = ${teamId})`;
  }

  /** Models a team may see: its own and every system model. */
  private visible(teamId: string): SQL {
    return or(eq(models.teamId, teamId), eq(models.isSystem, true))!;
  }

  async list(
    db: Executor,
    teamId: string,
    f: { includeSystem: boolean; minRating?: number; activeOnly: boolean; ids?: string[] },
  ): Promise<ModelWithMembership[]> {
    const inTeam = this.membership(teamId);
    const conds: SQL[] = [this.visible(teamId)];
    // Without includeSystem: the team's own models and the system models it has added.
    if (!f.includeSystem) conds.push(or(eq(models.teamId, teamId), inTeam)!);
    if (f.minRating !== undefined) conds.push(gte(models.modelRating, f.minRating));
    if (f.activeOnly) conds.push(eq(models.active, true));
    if (f.ids) conds.push(inArray(models.id, f.ids));
    const rows = await db
      .select({ m: models, inTeam })
      .from(models)
      .where(and(...conds))
      .orderBy(asc(models.name), asc(models.id));
    return rows.map((r) => ({ ...r.m, inTeam: r.inTeam }));
  }

  async findVisible(db: Executor, teamId: string, id: string): Promise<ModelWithMembership | undefined> {
    const [row] = await db
      .select({ m: models, inTeam: this.membership(teamId) })
      .from(models)
      .where(and(eq(models.id, id), this.visible(teamId)));
    return row ? { ...row.m, inTeam: row.inTeam } : undefined;
  }

  async exists(db: Executor, id: string): Promise<boolean> {
    const [row] = await db.select({ id: models.id }).from(models).where(eq(models.id, id));
    return row !== undefined;
  }

  async insert(db: Executor, v: ModelInsert): Promise<ModelRow> {
    const [row] = await db.insert(models).values(v).returning();
    return row!;
  }

  async update(db: Executor, id: string, v: Partial<ModelInsert>): Promise<ModelRow> {
    const [row] = await db
      .update(models)
      .set({ ...v, updated: new Date() })
      .where(eq(models.id, id))
      .returning();
    return row!;
  }

  /** The window the provider reported (or null), without touching `updated`: it is no edit of the model. */
  async setProbedWindow(db: Executor, id: string, probed: { tokens: number; source: string } | null): Promise<ModelRow | undefined> {
    const [row] = await db
      .update(models)
      .set({ probedContextWindow: probed?.tokens ?? null, probedContextWindowSource: probed?.source ?? null })
      .where(eq(models.id, id))
      .returning();
    return row;
  }

  async addToTeam(db: Executor, teamId: string, modelId: string): Promise<void> {
    await db.insert(teamModels).values({ teamId, modelId }).onConflictDoNothing();
  }

  async removeFromTeam(db: Executor, teamId: string, modelId: string): Promise<void> {
    await db.delete(teamModels).where(and(eq(teamModels.teamId, teamId), eq(teamModels.modelId, modelId)));
  }

  /** Of `ids`, those the team uses (own models in the team, added system models). */
  async usableIds(db: Executor, teamId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await db
      .select({ id: teamModels.modelId })
      .from(teamModels)
      .where(and(eq(teamModels.teamId, teamId), inArray(teamModels.modelId, ids)));
    return new Set(rows.map((r) => r.id));
  }

  /** Of `ids`, those that are not chat models — embedding or rerank (a workspace takes only chat models). */
  async embeddingIds(db: Executor, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await db
      .select({ id: models.id })
      .from(models)
      .where(and(inArray(models.id, ids), ne(models.kind, 'chat')));
    return new Set(rows.map((r) => r.id));
  }

  async findUsable(db: Executor, teamId: string, id: string): Promise<ModelRow | undefined> {
    const [row] = await db
      .select({ m: models })
      .from(models)
      .innerJoin(teamModels, and(eq(teamModels.modelId, models.id), eq(teamModels.teamId, teamId)))
      .where(eq(models.id, id));
    return row?.m;
  }
}
