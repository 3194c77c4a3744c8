import { and, asc, eq, inArray, notInArray, sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/client.js';
import { models, SYSTEM_SCOPE } from '../../db/schema/models.js';
import { workspaceMcpServers, workspaceModels, workspacePlus, workspaces } from '../../db/schema/workspaces.js';
import { visibleWorkspaceSql, type Viewer } from '../../policy/index.js';

export type WorkspaceRow = typeof workspaces.$inferSelect;
export type WorkspaceModelRow = typeof workspaceModels.$inferSelect & { modelName: string };
type WorkspaceModelInsert = typeof workspaceModels.$inferInsert;

/**
 * The scope of the model of this id that the team may use: its own, else the system model (a
 * team model never takes a system model's id, so at most one is found).
 */
function modelScopeSql(teamId: string, modelId: string): SQL {
  return sql`(select m.scope from models m where m.id = ${modelId}::uuid and m.scope in (${teamId}::uuid, ${SYSTEM_SCOPE}::uuid) order by m.scope = ${SYSTEM_SCOPE}::uuid limit 1)`;
}

/** Workspace ids are unique per team: every query names the team with the id. */
export class WorkspacesRepo {
  /** The workspaces the caller sees (policy/workspaces.ts). */
  async listVisible(db: Executor, v: Viewer): Promise<WorkspaceRow[]> {
    return db.select().from(workspaces).where(visibleWorkspaceSql(v, workspaces)).orderBy(asc(workspaces.created), asc(workspaces.id));
  }

  async findById(db: Executor, teamId: string, id: string): Promise<WorkspaceRow | undefined> {
    const [row] = await db
      .select()
      .from(workspaces)
      .where(and(eq(workspaces.teamId, teamId), eq(workspaces.id, id)));
    return row;
  }

  async exists(db: Executor, teamId: string, id: string): Promise<boolean> {
    return (await this.findById(db, teamId, id)) !== undefined;
  }

  async insert(db: Executor, v: typeof workspaces.$inferInsert): Promise<WorkspaceRow> {
    const [row] = await db.insert(workspaces).values(v).returning();
    return row!;
  }

  async update(db: Executor, teamId: string, id: string, v: Partial<typeof workspaces.$inferInsert>): Promise<WorkspaceRow> {
    const [row] = await db
      .update(workspaces)
      .set({ ...v, updated: new Date() })
      .where(and(eq(workspaces.teamId, teamId), eq(workspaces.id, id)))
      .returning();
    return row!;
  }

  async delete(db: Executor, teamId: string, id: string): Promise<void> {
    await db.delete(workspaces).where(and(eq(workspaces.teamId, teamId), eq(workspaces.id, id)));
  }

  async modelsOf(db: Executor, teamId: string, workspaceIds: string[]): Promise<WorkspaceModelRow[]> {
    if (workspaceIds.length === 0) return [];
    const rows = await db
      .select({ wm: workspaceModels, modelName: models.name })
      .from(workspaceModels)
      .innerJoin(models, and(eq(models.scope, workspaceModels.modelScope), eq(models.id, workspaceModels.modelId)))
      .where(and(eq(workspaceModels.teamId, teamId), inArray(workspaceModels.workspaceId, workspaceIds)))
      .orderBy(asc(workspaceModels.position));
    return rows.map((r) => ({ ...r.wm, modelName: r.modelName }));
  }

  /** Make the workspace's models exactly `modelIds`, in that order, keeping settings of those that stay. */
  async setModels(db: Executor, teamId: string, workspaceId: string, modelIds: string[]): Promise<void> {
    const ofWorkspace = and(eq(workspaceModels.teamId, teamId), eq(workspaceModels.workspaceId, workspaceId));
    if (modelIds.length === 0) {
      await db.delete(workspaceModels).where(ofWorkspace);
      return;
    }
    await db.delete(workspaceModels).where(and(ofWorkspace, notInArray(workspaceModels.modelId, modelIds)));
    await db
      .insert(workspaceModels)
      .values(modelIds.map((modelId, position) => ({ teamId, workspaceId, modelScope: modelScopeSql(teamId, modelId), modelId, position })))
      .onConflictDoUpdate({
        target: [workspaceModels.teamId, workspaceModels.workspaceId, workspaceModels.modelId],
        set: { position: sql`excluded.position` },
      });
  }

  /** The Plus entries each workspace draws on, in order, by workspace id. */
  async plusOf(db: Executor, teamId: string, workspaceIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(workspaceIds.map((id) => [id, []]));
    if (workspaceIds.length === 0) return out;
    const rows = await db
      .select({ workspaceId: workspacePlus.workspaceId, plusId: workspacePlus.plusId })
      .from(workspacePlus)
      .where(and(eq(workspacePlus.teamId, teamId), inArray(workspacePlus.workspaceId, workspaceIds)))
      .orderBy(asc(workspacePlus.position));
    for (const r of rows) out.get(r.workspaceId)?.push(r.plusId);
    return out;
  }

  /** Make the workspace's Plus entries exactly `plusIds`, in that order. */
  async setPlus(db: Executor, teamId: string, workspaceId: string, plusIds: string[]): Promise<void> {
    await db.delete(workspacePlus).where(and(eq(workspacePlus.teamId, teamId), eq(workspacePlus.workspaceId, workspaceId)));
    if (plusIds.length > 0) await db.insert(workspacePlus).values(plusIds.map((plusId, position) => ({ teamId, workspaceId, plusId, position })));
  }

  /** The MCP servers each workspace's turns use, in order, by workspace id. */
  async mcpOf(db: Executor, teamId: string, workspaceIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(workspaceIds.map((id) => [id, []]));
    if (workspaceIds.length === 0) return out;
    const rows = await db
      .select({ workspaceId: workspaceMcpServers.workspaceId, serverId: workspaceMcpServers.serverId })
      .from(workspaceMcpServers)
      .where(and(eq(workspaceMcpServers.teamId, teamId), inArray(workspaceMcpServers.workspaceId, workspaceIds)))
      .orderBy(asc(workspaceMcpServers.position));
    for (const r of rows) out.get(r.workspaceId)?.push(r.serverId);
    return out;
  }

  /** Make the workspace's MCP servers exactly `serverIds`, in that order. */
  async setMcp(db: Executor, teamId: string, workspaceId: string, serverIds: string[]): Promise<void> {
    await db.delete(workspaceMcpServers).where(and(eq(workspaceMcpServers.teamId, teamId), eq(workspaceMcpServers.workspaceId, workspaceId)));
    if (serverIds.length > 0) await db.insert(workspaceMcpServers).values(serverIds.map((serverId, position) => ({ teamId, workspaceId, serverId, position })));
  }

  async upsertModelSettings(db: Executor, teamId: string, workspaceId: string, modelId: string, settings: Partial<WorkspaceModelInsert>): Promise<void> {
    const [{ next } = { next: 0 }] = await db
      .select({ next: sql<number>`coalesce(max(${workspaceModels.position}) + 1, 0)::int` })
      .from(workspaceModels)
      .where(and(eq(workspaceModels.teamId, teamId), eq(workspaceModels.workspaceId, workspaceId)));
    const insert = db.insert(workspaceModels).values({ ...settings, teamId, workspaceId, modelScope: modelScopeSql(teamId, modelId), modelId, position: next });
    if (Object.keys(settings).length === 0) await insert.onConflictDoNothing();
    else await insert.onConflictDoUpdate({ target: [workspaceModels.teamId, workspaceModels.workspaceId, workspaceModels.modelId], set: settings });
  }
}
