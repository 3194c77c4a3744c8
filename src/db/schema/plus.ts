/**
 * Plus entries, their files, chunks and term statistics (owner: modules/plus).
 */
import { sql, type SQL } from 'drizzle-orm';
import { bigint, boolean, doublePrecision, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
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
    tokenSize: integer('token_size').notNull(),
    summary: text('summary'),
    /** some of the text was read by OCR (an image, or PDF pages without a text layer) */
    ocr: boolean('ocr').notNull().default(false),
    /**
     * True while an upload writes the file's chunks, a statement at a time (modules/plus/store.ts):
     * until then the file and its chunks are part of nothing — no listing, search or count reads them.
     */
    storing: boolean('storing').notNull().default(false),
    created: created(),
  },
  (t) => [
    index('plus_files_plus_idx').on(t.teamId, t.plusId),
    index('plus_files_storing_idx')
      .on(t.teamId)
      .where(sql`${t.storing}`),
    index('plus_files_thread_idx').on(t.threadId),
    foreignKey({ columns: [t.teamId, t.plusId], foreignColumns: [plusEntries.teamId, plusEntries.id] }).onDelete('cascade'),
  ],
);

/**
 * The ids of a team's files still being stored (plus_files.storing), as an array expression:
 * `c.file_id <> all(storingFilesOf(...))` leaves their chunks out (one index lookup, an empty
 * array almost always; a per-chunk lookup would cost a probe for each candidate).
 */
export const storingFilesOf = (teamId: SQL): SQL => sql`array(select sf.id from plus_files sf where sf.team_id = ${teamId} and sf.storing)`;

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
    // with the id: an entry's first chunk (where the lexical index build starts reading) in one lookup
    index('plus_chunks_plus_idx').on(t.teamId, t.plusId, t.id),
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

/**
 * An entry's evaluation set: questions, each with the passage that answers it — text the right
 * chunk must contain (whitespace and letter case aside), so that it survives re-ingestion, which
 * gives the chunks new ids. `position` orders the set as the team wrote it.
 */
export const plusEvalQuestions = pgTable(
  'plus_eval_questions',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id').notNull(),
    plusId: uuid('plus_id').notNull(),
    position: integer('position').notNull(),
    question: text('question').notNull(),
    passage: text('passage').notNull(),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [
    index('plus_eval_questions_plus_idx').on(t.teamId, t.plusId, t.position),
    foreignKey({ columns: [t.teamId, t.plusId], foreignColumns: [plusEntries.teamId, plusEntries.id] }).onDelete('cascade'),
  ],
);

/**
 * The last run of an entry's evaluation set (one row an entry, replaced by each run): when, by
 * whom, how it ranked, the overall figures and each question's (its text and passage as they
 * were, and the rank its passage came at).
 */
export const plusEvalRuns = pgTable(
  'plus_eval_runs',
  {
    teamId: uuid('team_id').notNull(),
    plusId: uuid('plus_id').notNull(),
    userId: integer('user_id').notNull(),
    ran: ts('ran').notNull(),
    method: text('method').notNull(),
    recallAt5: doublePrecision('recall_at5').notNull(),
    mrrAt10: doublePrecision('mrr_at10').notNull(),
    ndcgAt10: doublePrecision('ndcg_at10').notNull(),
    results: jsonb('results').$type<StoredEvalResult[]>().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.teamId, t.plusId] }),
    foreignKey({ columns: [t.teamId, t.plusId], foreignColumns: [plusEntries.teamId, plusEntries.id] }).onDelete('cascade'),
  ],
);

/** One question's figures in a stored run (plus_eval_runs.results). */
export interface StoredEvalResult {
  questionId: string;
  question: string;
  passage: string;
  /** 1-based rank of the first chunk holding the passage in the top 10; null: not there */
  rank: number | null;
  /** chunks of the entry holding the passage (0: the documents no longer contain it) */
  matchingChunks: number;
  recallAt5: number;
  reciprocalRankAt10: number;
  ndcgAt10: number;
}
