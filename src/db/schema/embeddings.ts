/**
 * Embeddings for hybrid retrieval (owner: modules/embeddings).
 */
import { sql } from 'drizzle-orm';
import { type AnyPgColumn, bigint, foreignKey, index, integer, pgTable, real, text, uuid } from 'drizzle-orm/pg-core';
import { ts } from './columns.js';
import { modelScopeCheck, models } from './models.js';
import { plusChunks, plusFiles } from './plus.js';
import { teams } from './teams.js';

/** A team's choice of one model: the model's key, and the check that it is the team's own or a system model. */
const teamModelKeys = (name: string) => (t: { teamId: AnyPgColumn; modelScope: AnyPgColumn; modelId: AnyPgColumn }) => [
  foreignKey({ columns: [t.modelScope, t.modelId], foreignColumns: [models.scope, models.id] }).onDelete('cascade'),
  modelScopeCheck(`${name}_scope_ck`, t.modelScope, t.teamId),
];

/** The embedding model a team's Plus entries are embedded with (one per team; none: full-text only). */
export const teamEmbeddingModels = pgTable(
  'team_embedding_models',
  {
    teamId: uuid('team_id')
      .primaryKey()
      .references(() => teams.id, { onDelete: 'cascade' }),
    /** the model's scope (models.scope) */
    modelScope: uuid('model_scope').notNull(),
    modelId: uuid('model_id').notNull(),
    updated: ts('updated').notNull().defaultNow(),
  },
  teamModelKeys('team_embedding_models'),
);

/** The rerank model a team's retrieval re-orders its best candidates with (one per team; none: no reranking). */
export const teamRerankModels = pgTable(
  'team_rerank_models',
  {
    teamId: uuid('team_id')
      .primaryKey()
      .references(() => teams.id, { onDelete: 'cascade' }),
    /** the model's scope (models.scope) */
    modelScope: uuid('model_scope').notNull(),
    modelId: uuid('model_id').notNull(),
    updated: ts('updated').notNull().defaultNow(),
  },
  teamModelKeys('team_rerank_models'),
);

/**
 * A file's embedding job and status, for the team's current embedding model: `pending` (waiting,
 * or waiting for a retry at `next_attempt`), `embedding` (claimed by a node until
 * `claimed_until`), `ready`, `failed` (retried at `next_attempt`, `error` says why).
 */
export const plusFileEmbeddings = pgTable(
  'plus_file_embeddings',
  {
    fileId: uuid('file_id')
      .primaryKey()
      .references(() => plusFiles.id, { onDelete: 'cascade' }),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    modelId: uuid('model_id').notNull(),
    status: text('status', { enum: ['pending', 'embedding', 'ready', 'failed'] }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    error: text('error'),
    nextAttempt: ts('next_attempt').notNull().defaultNow(),
    claimedUntil: ts('claimed_until'),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [
    index('plus_file_embeddings_due_idx')
      .on(t.nextAttempt)
      .where(sql`${t.status} <> 'ready'`),
    index('plus_file_embeddings_team_idx').on(t.teamId),
  ],
);

/**
 * One vector per chunk, of unit length (cosine similarity = dot product), as a plain `real[]` so
 * the schema is the same on every database; where the `vector` extension is present the search
 * casts it to pgvector's type for its distance operator (retrieval/vector.ts).
 */
export const plusChunkVectors = pgTable(
  'plus_chunk_vectors',
  {
    chunkId: bigint('chunk_id', { mode: 'number' })
      .primaryKey()
      .references(() => plusChunks.id, { onDelete: 'cascade' }),
    teamId: uuid('team_id').notNull(),
    fileId: uuid('file_id').notNull(),
    plusId: uuid('plus_id').notNull(),
    modelId: uuid('model_id').notNull(),
    embedding: real('embedding').array().notNull(),
  },
  (t) => [index('plus_chunk_vectors_plus_idx').on(t.teamId, t.plusId, t.modelId), index('plus_chunk_vectors_file_idx').on(t.fileId)],
);
