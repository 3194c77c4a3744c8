/**
 * The one drizzle schema, one file an area in schema/ (repositories import their area's file).
 * `npm run db:generate` (drizzle.config.ts points here) turns changes into a new numbered SQL
 * migration in src/db/migrations, applied at start-up on PGlite and PostgreSQL alike; db/client.ts
 * gives drizzle every table through this file.
 */
export * from './schema/teams.js';
export * from './schema/sign-in.js';
export * from './schema/models.js';
export * from './schema/mcp.js';
export * from './schema/workspaces.js';
export * from './schema/chat.js';
export * from './schema/prompt-logs.js';
export * from './schema/plus.js';
export * from './schema/instance.js';
export * from './schema/usage.js';
export * from './schema/embeddings.js';
export * from './schema/audit.js';
export * from './schema/retention.js';
export * from './schema/scim.js';
