import { changedFields, recordAudit } from '../audit/record.js';
import type { Db } from '../../db/client.js';
import { badRequest, forbidden, idTaken, notFound } from '../../errors.js';
import type { McpService } from '../mcp/service.js';
import { assertMaxTokensFit, type ModelsService } from '../models/service.js';
import { canSeeWorkspace, mayManageWorkspace, type Principal } from '../../policy/index.js';
import type { WorkspaceCache, WorkspaceWithModels } from './cache.js';
import { WorkspacesRepo, type WorkspaceModelRow, type WorkspaceRow } from './repo.js';
import type { AddWorkspaceBodyT, PatchWorkspaceBodyT, WorkspaceModelSettingsT, WorkspaceModelT, WorkspaceT } from './schema.js';

function modelView(m: WorkspaceModelRow): WorkspaceModelT {
  return {
    workspaceId: m.workspaceId,
    modelId: m.modelId,
    modelName: m.modelName,
    addedContext: m.addedContext,
    systemInstructions: m.systemInstructions,
    temperature: m.temperature,
    maxTokens: m.maxTokens,
    topP: m.topP,
    n: m.n,
    frequencyPenalty: m.frequencyPenalty,
    presencePenalty: m.presencePenalty,
    logitBias: m.logitBias ?? null,
  };
}

function view(w: WorkspaceRow, ms: WorkspaceModelRow[], plusIds: string[], mcpServerIds: string[]): WorkspaceT {
  return {
    id: w.id,
    name: w.name,
    chatHistoryType: w.chatHistoryType,
    contextType: w.contextType,
    sharingType: w.sharingType,
    greeting: w.greeting,
    samplePrompts: w.samplePrompts ?? [],
    models: ms.filter((m) => m.workspaceId === w.id).map(modelView),
    plusIds,
    mcpServerIds,
    allowedTools: w.allowedTools ?? null,
    followUpSearch: w.followUpSearch,
    userId: w.userId,
    created: w.created.toISOString(),
    updated: w.updated.toISOString(),
  };
}

export type { WorkspaceWithModels } from './cache.js';

/**
 * Which of these Plus entries the caller may see: implemented by PlusService, which comes after
 * workspaces in the module order, so it is handed in as this narrow interface (src/services.ts).
 */
export interface PlusVisibility {
  visibleIds(caller: Principal, ids: string[]): Promise<string[]>;
}

/** A workspace's key in the cache: its id is unique in its team only. */
const cacheKey = (teamId: string, id: string) => `${teamId}/${id}`;

export class WorkspacesService {
  private readonly repo = new WorkspacesRepo();

  constructor(
    private readonly db: Db,
    private readonly models: ModelsService,
    private readonly plus: PlusVisibility,
    private readonly mcp: Pick<McpService, 'visibleIds'>,
    /** shared with ModelsService, which drops the workspaces a changed model is in */
    private readonly cache: WorkspaceCache,
  ) {}

  async list(caller: Principal): Promise<WorkspaceT[]> {
    const rows = await this.repo.listVisible(this.db, caller);
    const ids = rows.map((r) => r.id);
    const t = caller.teamId;
    const [ms, plus, mcp] = await Promise.all([this.repo.modelsOf(this.db, t, ids), this.repo.plusOf(this.db, t, ids), this.repo.mcpOf(this.db, t, ids)]);
    const seen = await this.seenBy(caller, [...plus.values()].flat());
    return rows.map((r) => view(r, ms, (plus.get(r.id) ?? []).filter(seen), mcp.get(r.id) ?? []));
  }

  /** A workspace shows only the Plus entries its reader may see (an invisible entry's id is not leaked). */
  private async seenBy(caller: Principal, ids: string[]): Promise<(id: string) => boolean> {
    if (ids.length === 0) return () => true;
    const visible = new Set(await this.plus.visibleIds(caller, [...new Set(ids)]));
    return (id) => visible.has(id);
  }

  /** The workspace as the caller may see it; 404 when it does not exist or is not visible. */
  async load(caller: Principal, id: string): Promise<WorkspaceWithModels> {
    // ids are unique per team: the caller's team is part of the key (another team's workspace of this id is another workspace)
    const t = caller.teamId;
    const w = await this.cache.load(cacheKey(t, id), async () => {
      const row = await this.repo.findById(this.db, t, id);
      if (!row) return undefined;
      const [models, plus, mcp] = await Promise.all([
        this.repo.modelsOf(this.db, t, [id]),
        this.repo.plusOf(this.db, t, [id]),
        this.repo.mcpOf(this.db, t, [id]),
      ]);
      return { row, models, plusIds: plus.get(id) ?? [], mcpServerIds: mcp.get(id) ?? [] };
    });
    if (!w || !canSeeWorkspace(caller, w.row)) throw notFound('Workspace');
    return w;
  }

  async get(caller: Principal, id: string): Promise<WorkspaceT> {
    const w = await this.load(caller, id);
    return view(w.row, w.models, w.plusIds.filter(await this.seenBy(caller, w.plusIds)), w.mcpServerIds);
  }

  async create(caller: Principal, id: string, body: AddWorkspaceBodyT): Promise<WorkspaceT> {
    const { plusIds: plusBody, mcpServerIds: mcpBody, ...rest } = body;
    const modelIds = [...new Set(rest.modelIds ?? [])];
    const plusIds = [...new Set(plusBody ?? [])];
    const mcpServerIds = [...new Set(mcpBody ?? [])];
    await this.checkModels(caller, modelIds);
    await this.checkPlus(caller, plusIds);
    await this.checkMcp(caller, mcpServerIds);
    const row = await this.db.transaction(async (tx) => {
      // taken in the caller's team only: another team's workspace of this id is no concern (ids are per team)
      if (await this.repo.exists(tx, caller.teamId, id)) throw idTaken('workspace');
      const w = await this.repo.insert(tx, {
        id,
        teamId: caller.teamId,
        userId: caller.userId,
        name: rest.name,
        chatHistoryType: rest.chatHistoryType ?? 'TEAM',
        contextType: rest.contextType ?? 'SHARED',
        sharingType: rest.sharingType ?? 'TEAM',
        greeting: rest.greeting ?? null,
        samplePrompts: rest.samplePrompts ?? [],
        followUpSearch: rest.followUpSearch ?? 'carry',
        allowedTools: rest.allowedTools ?? null,
      });
      await this.repo.setModels(tx, caller.teamId, id, modelIds);
      await this.repo.setPlus(tx, caller.teamId, id, plusIds);
      await this.repo.setMcp(tx, caller.teamId, id, mcpServerIds);
      await recordAudit(tx, { action: 'workspace.create', actor: caller, target: { type: 'workspace', id }, details: { name: w.name } });
      return w;
    });
    return view(row, await this.repo.modelsOf(this.db, caller.teamId, [id]), plusIds, mcpServerIds);
  }

  async update(caller: Principal, id: string, body: PatchWorkspaceBodyT): Promise<WorkspaceT> {
    const { row: current, plusIds: currentPlus } = await this.load(caller, id);
    this.requireManage(caller, current);
    const { modelIds, plusIds, mcpServerIds, ...fields } = body;
    const ids = modelIds ? [...new Set(modelIds)] : undefined;
    const mcp = mcpServerIds ? [...new Set(mcpServerIds)] : undefined;
    if (mcp) await this.checkMcp(caller, mcp);
    let plus = plusIds ? [...new Set(plusIds)] : undefined;
    if (ids) await this.checkModels(caller, ids);
    if (plus) {
      await this.checkPlus(caller, plus);
      // The setter replaces the entries they can see; those they cannot (another user's private entry) stay.
      const seen = await this.seenBy(caller, currentPlus);
      plus = [...plus, ...currentPlus.filter((p) => !seen(p) && !plus!.includes(p))];
    }
    const row = await this.db.transaction(async (tx) => {
      const w = await this.repo.update(tx, caller.teamId, id, fields);
      if (ids) await this.repo.setModels(tx, caller.teamId, id, ids);
      if (plus) await this.repo.setPlus(tx, caller.teamId, id, plus);
      if (mcp) await this.repo.setMcp(tx, caller.teamId, id, mcp);
      await recordAudit(tx, {
        action: 'workspace.update',
        actor: caller,
        target: { type: 'workspace', id },
        details: { name: w.name, fields: changedFields(body) },
      });
      return w;
    });
    this.cache.delete(cacheKey(caller.teamId, id));
    const t = caller.teamId;
    const [ms, plusNow, mcpNow] = await Promise.all([
      this.repo.modelsOf(this.db, t, [id]),
      this.repo.plusOf(this.db, t, [id]),
      this.repo.mcpOf(this.db, t, [id]),
    ]);
    const now = plusNow.get(id) ?? [];
    return view(row, ms, now.filter(await this.seenBy(caller, now)), mcpNow.get(id) ?? []);
  }

  async delete(caller: Principal, id: string): Promise<void> {
    const { row } = await this.load(caller, id);
    this.requireManage(caller, row);
    await this.db.transaction(async (tx) => {
      await this.repo.delete(tx, caller.teamId, id);
      await recordAudit(tx, { action: 'workspace.delete', actor: caller, target: { type: 'workspace', id }, details: { name: row.name } });
    });
    this.cache.delete(cacheKey(caller.teamId, id));
  }

  /** Upsert one model's settings in a workspace (adding the model when it is not there yet). */
  async updateModel(caller: Principal, workspaceId: string, modelId: string, settings: WorkspaceModelSettingsT): Promise<WorkspaceModelT> {
    const { row } = await this.load(caller, workspaceId);
    this.requireManage(caller, row);
    const model = await this.models.findUsable(caller.teamId, modelId);
    if (!model) throw notFound('Model');
    this.models.assertKind(model, 'chat', 'params/modelId');
    assertMaxTokensFit(model, settings.maxTokens);
    await this.db.transaction(async (tx) => {
      await this.repo.upsertModelSettings(tx, caller.teamId, workspaceId, modelId, settings);
      await recordAudit(tx, {
        action: 'workspace.update',
        actor: caller,
        target: { type: 'workspace', id: workspaceId },
        details: { name: row.name, modelId, fields: changedFields(settings) },
      });
    });
    this.cache.delete(cacheKey(caller.teamId, workspaceId));
    const wm = (await this.repo.modelsOf(this.db, caller.teamId, [workspaceId])).find((m) => m.modelId === modelId)!;
    return modelView(wm);
  }

  /** policy/workspaces.ts: the creator and the team's owners/admins manage a workspace; other members only use it. */
  private requireManage(caller: Principal, w: WorkspaceRow): void {
    if (!mayManageWorkspace(caller, w)) {
      throw forbidden('Only the workspace creator or a team owner/admin may change this workspace');
    }
  }

  /** A workspace's Plus entries must exist and be visible to whoever sets them (docs/API.md, "Workspace Plus entries"). */
  private async checkPlus(caller: Principal, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const visible = new Set(await this.plus.visibleIds(caller, ids));
    const bad = ids.filter((id) => !visible.has(id));
    if (bad.length > 0) {
      throw badRequest(
        'unknown_plus_entry',
        `Plus entries not found: ${bad.join(', ')}`,
        bad.map((id) => ({ path: `body/plusIds/${ids.indexOf(id)}`, message: 'is not a Plus entry you can see' })),
      );
    }
  }

  /** A workspace's MCP servers must be its team's (another team's is as unknown as a missing one). */
  private async checkMcp(caller: Principal, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const visible = new Set(await this.mcp.visibleIds(caller, ids));
    const bad = ids.filter((id) => !visible.has(id));
    if (bad.length > 0) {
      throw badRequest(
        'unknown_mcp_server',
        `MCP servers not found: ${bad.join(', ')}`,
        bad.map((id) => ({ path: `body/mcpServerIds/${ids.indexOf(id)}`, message: 'is not an MCP server of this team' })),
      );
    }
  }

  private async checkModels(caller: Principal, ids: string[]): Promise<void> {
    const bad = await this.models.unusable(caller.teamId, ids);
    if (bad.length > 0) {
      throw badRequest(
        'unknown_model',
        `Models not available to this team: ${bad.join(', ')}`,
        bad.map((id) => ({ path: `body/modelIds/${ids.indexOf(id)}`, message: 'is not a model this team uses' })),
      );
    }
    const embedding = await this.models.embeddingModelIds(caller.teamId, ids);
    if (embedding.length > 0) {
      throw badRequest(
        'not_a_chat_model',
        `Embedding and rerank models cannot answer chats: ${embedding.join(', ')}`,
        embedding.map((id) => ({ path: `body/modelIds/${ids.indexOf(id)}`, message: 'is an embedding or rerank model, not a chat model' })),
      );
    }
  }
}
