import { and, asc, eq, ne, gte, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { models, teamModels } from '../../db/schema/models.js';
import { visibleModelsSql } from '../../policy/index.js';

export type ModelRow = typeof models.$inferSelect;
export type ModelInsert = typeof models.$inferInsert;
export type ModelWithMembership = ModelRow & { inTeam: boolean };

/** A model's key: its scope (the team's id, or SYSTEM_SCOPE) and its id. */
export type ModelKey = Pick<ModelRow, 'scope' | 'id'>;

const byKey = (k: ModelKey) => and(eq(models.scope, k.scope), eq(models.id, k.id))!;

/**
 * Model ids are unique per scope: a team sees its own models and the system models, and a team
 * model never takes a system model's id, so an id names at most one model the team sees.
 */
export class ModelsRepo {
  private membership(teamId: string) {
    return sql<boolean>`exists (select 1 from team_models tm where tm.model_scope = "models"."scope" and tm.model_id = "models"."id" and tm.team_id = ${teamId})`;
  }

  /** Models a team may see: its own and every system model. */
  private visible(teamId: string): SQL {
    return visibleModelsSql(teamId, models);
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

  /** The scopes holding a model of this id (`scopes`: only among those; null: any). */
  async scopesOf(db: Executor, id: string, scopes: string[] | null): Promise<string[]> {
    const rows = await db
      .select({ scope: models.scope })
      .from(models)
      .where(and(eq(models.id, id), scopes ? inArray(models.scope, scopes) : undefined));
    return rows.map((r) => r.scope);
  }

  async insert(db: Executor, v: ModelInsert): Promise<ModelRow> {
    const [row] = await db.insert(models).values(v).returning();
    return row!;
  }

  async update(db: Executor, key: ModelKey, v: Partial<ModelInsert>): Promise<ModelRow> {
    const [row] = await db
      .update(models)
      .set({ ...v, updated: new Date() })
      .where(byKey(key))
      .returning();
    return row!;
  }

  /** The window the provider reported (or null), without touching `updated`: it is no edit of the model. */
  async setProbedWindow(db: Executor, key: ModelKey, probed: { tokens: number; source: string } | null): Promise<ModelRow | undefined> {
    const [row] = await db
      .update(models)
      .set({ probedContextWindow: probed?.tokens ?? null, probedContextWindowSource: probed?.source ?? null })
      .where(byKey(key))
      .returning();
    return row;
  }

  async addToTeam(db: Executor, teamId: string, model: ModelKey): Promise<void> {
    await db.insert(teamModels).values({ teamId, modelScope: model.scope, modelId: model.id }).onConflictDoNothing();
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
  async embeddingIds(db: Executor, teamId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await db
      .select({ id: models.id })
      .from(models)
      .where(and(this.visible(teamId), inArray(models.id, ids), ne(models.kind, 'chat')));
    return new Set(rows.map((r) => r.id));
  }

  async findUsable(db: Executor, teamId: string, id: string): Promise<ModelRow | undefined> {
    const [row] = await db
      .select({ m: models })
      .from(models)
      .innerJoin(teamModels, and(eq(teamModels.modelScope, models.scope), eq(teamModels.modelId, models.id), eq(teamModels.teamId, teamId)))
      .where(eq(models.id, id));
    return row?.m;
  }
}
