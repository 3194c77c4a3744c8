/**
 * Instance-wide settings (owner: security/secrets-repo.ts).
 */
import { pgTable, text } from 'drizzle-orm/pg-core';
import { created } from './columns.js';

/**
 * Instance-wide facts every node must agree on, by name. `secret_key_fingerprint`: an HMAC of
 * the SECRET_KEY (never the key), so a node with another key refuses to start.
 */
export const instanceSettings = pgTable('instance_settings', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  created: created(),
});
