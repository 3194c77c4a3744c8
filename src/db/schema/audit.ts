/**
 * The audit log (owner: modules/audit): one row per recorded action, append-only (a trigger
 * refuses UPDATE and DELETE). No foreign keys: an entry outlives the team, user or key it names.
 */
import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { ts } from './columns.js';

export const auditLog = pgTable(
  'audit_log',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    time: ts('time').notNull().defaultNow(),
    /** null: an action of no team (a failed sign-in for an unknown email) — seen by the instance admin only */
    teamId: uuid('team_id'),
    actorUserId: integer('actor_user_id'),
    actorApiKeyId: uuid('actor_api_key_id'),
    actorIp: text('actor_ip'),
    action: text('action').notNull(),
    targetType: text('target_type'),
    targetId: text('target_id'),
    outcome: text('outcome', { enum: ['success', 'failure'] }).notNull(),
    details: jsonb('details')
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
  },
  (t) => [index('audit_log_team_time_idx').on(t.teamId, t.time), index('audit_log_time_idx').on(t.time)],
);
