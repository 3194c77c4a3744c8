/**
 * Plus entries, their files, chunks and term statistics (owner: modules/plus).
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, foreignKey, index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { bytea, created, ts, tsvector } from './columns.js';
import { teams, users } from './teams.js';

/** Keyed by (team, id): the client may choose the id, and another team's id of the same value is another entry. */
export const plusEntries = pgTable(
  'plus_entries',
  {
    id: uuid('id').notNull(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    title: text('title'),
    description: text('description'),
    context: text('context'),
    isPublic: boolean('is_public').notNull().default(false),
    /** number of plus_chunks of the entry, kept with plus_terms by PlusRepo (the N of retrieval's IDF) */
    chunkCount: integer('chunk_count').notNull().default(0),
    /**
     * Raised by the database (triggers of migration 0013; since 0029 for the chunk's team's entry only) by every statement that inserts or
     * deletes chunks of the entry, however it does: what an in-memory lexical index of the
     * entry (retrieval/lexical-index/) checks that it is still current.
     */
    lexicalVersion: bigint('lexical_version', { mode: 'number' }).notNull().default(0),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.id] })],
);

export const plusFiles = pgTable(
  'plus_files',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id').notNull(),
    plusId: uuid('plus_id').notNull(),
    userId: integer('user_id').notNull(),
    /** set when the file was added from a chat: later turns of that thread draw on it */
    threadId: uuid('thread_id'),
    filename: text('filename').notNull(),
    mimeType: text('mime_type').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    content: bytea('content').notNull(),
    text: text('text').notNull(),
    tokenSize: integer('token_size').notNull(),
    summary: text('summary'),
    /** some of the text was read by OCR (an image, or PDF pages without a text layer) */
    ocr: boolean('ocr').notNull().default(false),
    created: created(),
  },
  (t) => [
    index('plus_files_plus_idx').on(t.teamId, t.plusId),
    index('plus_files_thread_idx').on(t.threadId),
    foreignKey({ columns: [t.teamId, t.plusId], foreignColumns: [plusEntries.teamId, plusEntries.id] }).onDelete('cascade'),
  ],
);

export const plusChunks = pgTable(
  'plus_chunks',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    fileId: uuid('file_id')
      .notNull()
      .references(() => plusFiles.id, { onDelete: 'cascade' }),
    teamId: uuid('team_id').notNull(),
    plusId: uuid('plus_id').notNull(),
    idx: integer('idx').notNull(),
    fileData: text('file_data').notNull(),
    fileDataProcessed: text('file_data_processed').notNull(),
    tokenSize: integer('token_size').notNull(),
    // retrieval: the chunk's section headings (src/ingest/chunking/section-headings.ts),
    // indexed with weight A after the text (weight D, positions unchanged) so that a search can
    // match them and weigh them as a field of their own ('lexeme:A' in a tsquery)
    heading: text('heading'),
    search: tsvector('search').generatedAlwaysAs(
      sql`to_tsvector('english', file_data_processed) || setweight(to_tsvector('english', coalesce(heading, '')), 'A')`,
    ),
  },
  (t) => [
    index('plus_chunks_file_idx').on(t.fileId, t.idx),
    index('plus_chunks_plus_idx').on(t.teamId, t.plusId),
    index('plus_chunks_search_idx').using('gin', t.search),
  ],
);

/**
 * Document frequencies for retrieval: for each lexeme of an entry's chunks (the English tsvector
 * of plus_chunks.search), the number of the entry's chunks containing it. Maintained by PlusRepo
 * in the transaction that inserts or deletes a file's chunks; removed with the entry.
 */
export const plusTerms = pgTable(
  'plus_terms',
  {
    teamId: uuid('team_id').notNull(),
    plusId: uuid('plus_id').notNull(),
    lexeme: text('lexeme').notNull(),
    df: integer('df').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.plusId, t.lexeme] }),
    foreignKey({ columns: [t.teamId, t.plusId], foreignColumns: [plusEntries.teamId, plusEntries.id] }).onDelete('cascade'),
  ],
);
