/**
 * Threads and messages, with the shapes stored in their JSON columns (owner: modules/chat).
 */
import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { bytea, created, ts, tsvector } from './columns.js';
import { teams, users } from './teams.js';
import { workspaces } from './workspaces.js';

export const chatThreads = pgTable(
  'chat_threads',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    title: text('title').notNull(),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
    /** conversation search (modules/chat/search-repo.ts): the title's English full text */
    search: tsvector('search').generatedAlwaysAs(sql`to_tsvector('english', title)`),
  },
  (t) => [index('chat_threads_ws_idx').on(t.workspaceId, t.updated), index('chat_threads_search_idx').using('gin', t.search)],
);

/** A failed turn's problem, as its stream's `error` event said it. */
export interface StoredTurnError {
  status: number;
  code: string;
  detail: string;
}

export interface StoredUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}
export interface StoredSource {
  plusId: string;
  fileId: string | null;
  filename: string | null;
  chunkId: number | null;
  /** the final score (what ordered the chunks) */
  score: number;
  excerpt: string;
  // retrieval; absent on sources stored before it
  /** 1-based final rank among the candidates */
  rank?: number;
  /** where the chunk stood in each ranked list (null: not found by that search, or it did not run) */
  ranking?: { lexical: { score: number; rank: number } | null; vector: { score: number; rank: number } | null };
}

/** An image of a message, as the message lists it (its bytes: chat_images). */
export interface StoredImage {
  id: string;
  mimeType: string;
  width: number;
  height: number;
}

/** A follow-up searched as rewritten by the turn's model (workspaces.follow_up_search = 'rewrite'). */
export interface SearchRewrite {
  /** what was searched */
  query: string;
  /** the rewrite call's usage (provider-reported, else Atrium's count) */
  promptTokens: number;
  completionTokens: number;
}

export const chatMessages = pgTable(
  'chat_messages',
  {
    id: uuid('id').primaryKey(),
    /** insertion order within a thread; timestamps can tie */
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => chatThreads.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['system', 'user', 'assistant'] }).notNull(),
    content: text('content').notNull(),
    modelId: uuid('model_id'),
    usage: jsonb('usage').$type<StoredUsage>(),
    sources: jsonb('sources').$type<StoredSource[]>(),
    status: text('status', { enum: ['ok', 'error', 'interrupted'] })
      .notNull()
      .default('ok'),
    /** why the turn failed (an assistant message of status `error`, or one cut off by a provider failure) */
    error: jsonb('error').$type<StoredTurnError>(),
    /** the user's images (sent to a vision model) or the generated ones (an image model's answer); null: none */
    images: jsonb('images').$type<StoredImage[]>(),
    created: created(),
    /** conversation search (modules/chat/search-repo.ts): the text's English full text, its first 100,000 characters */
    search: tsvector('search').generatedAlwaysAs(sql`to_tsvector('english', left(content, 100000))`),
  },
  (t) => [index('chat_messages_thread_idx').on(t.threadId, t.seq), index('chat_messages_search_idx').using('gin', t.search)],
);

/** The bytes of messages' images (modules/chat/images-repo.ts), read by whoever may read the thread. */
export const chatImages = pgTable(
  'chat_images',
  {
    id: uuid('id').primaryKey(),
    messageId: uuid('message_id')
      .notNull()
      .references(() => chatMessages.id, { onDelete: 'cascade' }),
    mimeType: text('mime_type').notNull(),
    width: integer('width').notNull(),
    height: integer('height').notNull(),
    bytes: integer('bytes').notNull(),
    data: bytea('data').notNull(),
    created: created(),
  },
  (t) => [index('chat_images_message_idx').on(t.messageId)],
);
