/**
 * Teams, their users and API keys (owner: modules/teams).
 */
import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { created, ts } from './columns.js';

export const teams = pgTable('teams', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  created: created(),
  /**
   * Raised in the transaction of every change to the team's budgets (modules/usage), and read with
   * every API key: a node reuses the budget rules it read at the revision the caller's key read
   * gives, so a change on any node binds the next call on every node without a read of the rules.
   */
  budgetsRevision: integer('budgets_revision').notNull().default(0),
});

export const users = pgTable(
  'users',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    email: text('email').notNull(),
    /** security/email.ts's emailKey(email): what sign-in, its throttle and the per-team check compare */
    emailKey: text('email_key').notNull(),
    role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull(),
    instanceAdmin: boolean('instance_admin').notNull().default(false),
    created: created(),
    deleted: ts('deleted'),
  },
  (t) => [uniqueIndex('users_team_email_uq').on(t.teamId, sql`lower(${t.email})`), index('users_email_key_idx').on(t.emailKey)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** sha256 of the key; the key itself is never stored */
    keyHash: text('key_hash').notNull(),
    /** first characters of the key, to recognise it in a list */
    prefix: text('prefix').notNull(),
    created: created(),
    lastUsed: ts('last_used'),
    revoked: ts('revoked'),
  },
  (t) => [uniqueIndex('api_keys_hash_uq').on(t.keyHash), index('api_keys_user_idx').on(t.userId)],
);
