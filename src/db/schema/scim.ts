/**
 * SCIM provisioning tokens, one per team (owner: modules/scim). Only the SHA-256 of the token is kept.
 */
import { pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { created } from './columns.js';
import { teams } from './teams.js';

export const scimTokens = pgTable(
  'scim_tokens',
  {
    teamId: uuid('team_id')
      .primaryKey()
      .references(() => teams.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull(),
    created: created(),
  },
  (t) => [uniqueIndex('scim_tokens_hash_uq').on(t.tokenHash)],
);
