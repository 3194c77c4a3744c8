/**
 * Workspaces, their per-model settings and the Plus entries they always draw on (owner: modules/workspaces).
 */
import { doublePrecision, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { created, ts } from './columns.js';
import { mcpServers } from './mcp.js';
import { modelScopeCheck, models } from './models.js';
import { plusEntries } from './plus.js';
import { teams, users } from './teams.js';

/** Keyed by (team, id): the client may choose the id, and another team's id of the same value is another workspace. */
export const workspaces = pgTable(
  'workspaces',
  {
    id: uuid('id').notNull(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    chatHistoryType: text('chat_history_type', { enum: ['TEAM', 'USER'] }).notNull(),
    contextType: text('context_type', { enum: ['SHARED', 'PRIVATE'] }).notNull(),
    sharingType: text('sharing_type', { enum: ['TEAM', 'PRIVATE'] }).notNull(),
    greeting: text('greeting'),
    samplePrompts: jsonb('sample_prompts').$type<string[]>(),
    /** how a follow-up question is searched: with the previous question's key terms carried, or rewritten by the turn's model */
    followUpSearch: text('follow_up_search', { enum: ['carry', 'rewrite'] })
      .notNull()
      .default('carry'),
    /** the tool names (of its MCP servers) a turn may call; null: every tool of its servers */
    allowedTools: jsonb('allowed_tools').$type<string[]>(),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.id] })],
);

export const workspaceModels = pgTable(
  'workspace_models',
  {
    teamId: uuid('team_id').notNull(),
    /** the model's scope (models.scope): the team's id for its own model, SYSTEM_SCOPE for a system model */
    modelScope: uuid('model_scope').notNull(),
    workspaceId: uuid('workspace_id').notNull(),
    modelId: uuid('model_id').notNull(),
    position: integer('position').notNull(),
    addedContext: text('added_context'),
    systemInstructions: text('system_instructions'),
    temperature: doublePrecision('temperature'),
    maxTokens: integer('max_tokens'),
    topP: doublePrecision('top_p'),
    n: integer('n'),
    frequencyPenalty: doublePrecision('frequency_penalty'),
    presencePenalty: doublePrecision('presence_penalty'),
    logitBias: jsonb('logit_bias').$type<Record<string, number>>(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.workspaceId, t.modelId] }),
    foreignKey({ columns: [t.teamId, t.workspaceId], foreignColumns: [workspaces.teamId, workspaces.id] }).onDelete('cascade'),
    foreignKey({ columns: [t.modelScope, t.modelId], foreignColumns: [models.scope, models.id] }).onDelete('cascade'),
    modelScopeCheck('workspace_models_scope_ck', t.modelScope, t.teamId),
  ],
);

/**
 * A workspace's own Plus entries (`Workspace.plusIds`), in order: every chat turn in the
 * workspace draws context from them (those the caller may see), beside the request's `plusIds`.
 * Deleting the entry or the workspace removes the row.
 */
export const workspacePlus = pgTable(
  'workspace_plus',
  {
    teamId: uuid('team_id').notNull(),
    workspaceId: uuid('workspace_id').notNull(),
    plusId: uuid('plus_id').notNull(),
    position: integer('position').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.workspaceId, t.plusId] }),
    index('workspace_plus_plus_idx').on(t.teamId, t.plusId),
    foreignKey({ columns: [t.teamId, t.workspaceId], foreignColumns: [workspaces.teamId, workspaces.id] }).onDelete('cascade'),
    foreignKey({ columns: [t.teamId, t.plusId], foreignColumns: [plusEntries.teamId, plusEntries.id] }).onDelete('cascade'),
  ],
);

/**
 * A workspace's MCP servers (`Workspace.mcpServerIds`), in order: every chat turn in the workspace
 * is offered their tools. Deleting the server or the workspace removes the row.
 */
export const workspaceMcpServers = pgTable(
  'workspace_mcp_servers',
  {
    teamId: uuid('team_id').notNull(),
    workspaceId: uuid('workspace_id').notNull(),
    serverId: uuid('server_id')
      .notNull()
      .references(() => mcpServers.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.workspaceId, t.serverId] }),
    index('workspace_mcp_servers_server_idx').on(t.serverId),
    foreignKey({ columns: [t.teamId, t.workspaceId], foreignColumns: [workspaces.teamId, workspaces.id] }).onDelete('cascade'),
  ],
);
