/**
 * Workspaces, their per-model settings and the Plus entries they always draw on (owner: modules/workspaces).
 */
import { doublePrecision, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { created, ts } from './columns.js';
import { mcpServers } from './mcp.js';
import { models } from './models.js';
import { plusEntries } from './plus.js';
import { teams, users } from './teams.js';

export const workspaces = pgTable(
  'workspaces',
  {
    id: uuid('id').primaryKey(),
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
  (t) => [index('workspaces_team_idx').on(t.teamId)],
);

export const workspaceModels = pgTable(
  'workspace_models',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
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
  (t) => [primaryKey({ columns: [t.workspaceId, t.modelId] })],
);

/**
 * A workspace's own Plus entries (`Workspace.plusIds`), in order: every chat turn in the
 * workspace draws context from them (those the caller may see), beside the request's `plusIds`.
 * Deleting the entry or the workspace removes the row.
 */
export const workspacePlus = pgTable(
  'workspace_plus',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    plusId: uuid('plus_id')
      .notNull()
      .references(() => plusEntries.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.plusId] }), index('workspace_plus_plus_idx').on(t.plusId)],
);

/**
 * A workspace's MCP servers (`Workspace.mcpServerIds`), in order: every chat turn in the workspace
 * is offered their tools. Deleting the server or the workspace removes the row.
 */
export const workspaceMcpServers = pgTable(
  'workspace_mcp_servers',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    serverId: uuid('server_id')
      .notNull()
      .references(() => mcpServers.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.serverId] }), index('workspace_mcp_servers_server_idx').on(t.serverId)],
);
