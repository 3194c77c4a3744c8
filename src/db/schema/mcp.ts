/**
 * MCP servers: a team's tool servers, reached over MCP streamable HTTP (owner: modules/mcp).
 */
import { boolean, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { created, ts } from './columns.js';
import { teams } from './teams.js';

export const mcpServers = pgTable(
  'mcp_servers',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    url: text('url').notNull(),
    /** the custom headers as JSON `{name: value}`, sealed by SecretBox (security/secret-box.ts); null: none */
    headersEnc: text('headers_enc'),
    /** the custom headers' names (what the API shows of them) */
    headerNames: jsonb('header_names').$type<string[]>().notNull().default([]),
    enabled: boolean('enabled').notNull().default(true),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [index('mcp_servers_team_idx').on(t.teamId)],
);
