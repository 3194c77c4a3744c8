import { TtlCache } from '../../cache.js';
import type { ModelDependent } from '../models/service.js';
import type { WorkspaceModelRow, WorkspaceRow } from './repo.js';

export interface WorkspaceWithModels {
  row: WorkspaceRow;
  models: WorkspaceModelRow[];
  /** the Plus entries every turn in the workspace draws on (those the caller may see) */
  plusIds: string[];
  /** the MCP servers whose tools its turns are offered (the team's; enabled or not) */
  mcpServerIds: string[];
}

/** How long a workspace's settings are kept (every chat turn loads them; they change rarely). */
const WORKSPACE_CACHE_MS = 2_000;

/**
 * The workspaces' settings cache, with their models' settings in it. It is built before
 * ModelsService (src/services.ts), which is handed it as a ModelDependent: a model's change
 * drops the workspaces that use it, with no listener registered after construction.
 */
export class WorkspaceCache extends TtlCache<string, WorkspaceWithModels> implements ModelDependent {
  constructor() {
    super(WORKSPACE_CACHE_MS);
  }

  forgetModel(modelId: string): void {
    this.deleteWhere((w) => w.models.some((m) => m.modelId === modelId));
  }
}
