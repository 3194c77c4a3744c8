/**
 * Per-team retention settings (owner: modules/retention). A team without a row keeps everything.
 */
import { integer, pgTable, uuid } from 'drizzle-orm/pg-core';
import { teams } from './teams.js';

export const teamRetention = pgTable('team_retention', {
  teamId: uuid('team_id')
    .primaryKey()
    .references(() => teams.id, { onDelete: 'cascade' }),
  /** threads (not pinned) whose last activity is older than this many days are deleted; null: kept */
  threadsDays: integer('threads_days'),
  /** prompt logs older than this many days are deleted; null: kept */
  promptLogsDays: integer('prompt_logs_days'),
});
