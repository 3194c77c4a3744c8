/**
 * One log per provider call (owner: modules/prompt-logs).
 */
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import type { SearchRewrite } from './chat.js';
import { created, tsvector } from './columns.js';
import { teams } from './teams.js';

/** One row per completion attempt. No foreign key to threads: deleting a thread keeps its logs. */
export const promptLogs = pgTable(
  'prompt_logs',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: integer('user_id').notNull(),
    workspaceId: uuid('workspace_id'),
    threadId: uuid('thread_id'),
    modelId: uuid('model_id'),
    modelName: text('model_name'),
    prompt: text('prompt').notNull(),
    response: text('response'),
    promptTokens: integer('prompt_tokens'),
    completionTokens: integer('completion_tokens'),
    latencyMs: integer('latency_ms'),
    /** pending while the provider is being called: a crash leaves the attempt visible, not lost */
    status: text('status', { enum: ['pending', 'ok', 'error', 'interrupted'] }).notNull(),
    error: text('error'),
    created: created(),
    /**
     * What the turn reserved against budgets in the database (PostgreSQL; opaque here, written and
     * read back by modules/usage): cleared when the turn settles; left on a log the stale sweep
     * finished, so the usage module's sweep can give a crashed node's reservation back, once.
     */
    reservation: jsonb('reservation'),
    /** a follow-up searched as rewritten by the turn's model: the query and what that call used (also in the turn's ledger row) */
    rewrite: jsonb('rewrite').$type<SearchRewrite>(),
    search: tsvector('search').generatedAlwaysAs(sql`to_tsvector('simple', coalesce(prompt, '') || ' ' || coalesce(response, ''))`),
  },
  (t) => [
    index('prompt_logs_team_created_idx').on(t.teamId, t.created),
    index('prompt_logs_search_idx').using('gin', t.search),
    // the sweep of logs a crash left pending runs on every node every minute: it reads only this
    index('prompt_logs_pending_idx')
      .on(t.created)
      .where(sql`${t.status} = 'pending'`),
    // reservations of abandoned turns, which the usage sweep gives back: no live log is ever in it
    index('prompt_logs_abandoned_reservation_idx')
      .on(t.id)
      .where(sql`${t.reservation} is not null and ${t.status} <> 'pending'`),
  ],
);
