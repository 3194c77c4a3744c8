/**
 * Usage ledger and budgets (owner: modules/usage). The turn's two statements embed its SQL
 * fragments (usageSql), so the chat repo writes these rows too.
 */
import { doublePrecision, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { created, ts } from './columns.js';
import { teams } from './teams.js';

/**
 * One row per completion attempt that reached (or tried to reach) a provider, written in the
 * same statement as the turn's answer. `id` is the turn's prompt-log id: a turn is counted once.
 * No foreign keys but the team: deleting a user, key, workspace or model keeps the spend.
 */
export const usageLedger = pgTable(
  'usage_ledger',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: integer('user_id').notNull(),
    /** null when the caller signed in without an API key */
    apiKeyId: uuid('api_key_id'),
    workspaceId: uuid('workspace_id'),
    modelId: uuid('model_id'),
    modelName: text('model_name'),
    promptTokens: integer('prompt_tokens').notNull(),
    completionTokens: integer('completion_tokens').notNull(),
    credits: doublePrecision('credits').notNull(),
    status: text('status', { enum: ['ok', 'error', 'interrupted'] }).notNull(),
    created: created(),
  },
  (t) => [index('usage_ledger_team_created_idx').on(t.teamId, t.created), index('usage_ledger_user_created_idx').on(t.userId, t.created)],
);

/**
 * A budget (credits per period) and/or a rate limit (requests per minute) on a team, a user or an
 * API key. The counters live on the row so that one conditional UPDATE reserves against it on
 * any node: `used` is the spend (settled + reserved in flight) of the period that began at
 * `windowStart`; `rateCount` the requests of the minute that began at `rateWindow`.
 */
export const budgets = pgTable(
  'budgets',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    scope: text('scope', { enum: ['team', 'user', 'apiKey'] }).notNull(),
    /** the team's uuid, the user's integer id as text, or the API key's uuid */
    scopeId: text('scope_id').notNull(),
    period: text('period', { enum: ['day', 'month', 'total'] }).notNull(),
    credits: doublePrecision('credits'),
    requestsPerMinute: integer('requests_per_minute'),
    used: doublePrecision('used').notNull().default(0),
    windowStart: ts('window_start'),
    rateCount: integer('rate_count').notNull().default(0),
    rateWindow: ts('rate_window'),
    created: created(),
  },
  (t) => [uniqueIndex('budgets_scope_uq').on(t.teamId, t.scope, t.scopeId, t.period)],
);
