/**
 * Threads and messages, with the shapes stored in their JSON columns (owner: modules/chat).
 */
import { sql } from 'drizzle-orm';
import { bigint, boolean, foreignKey, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
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
    workspaceId: uuid('workspace_id').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    title: text('title').notNull(),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
    /** kept by the team's retention whatever its age */
    pinned: boolean('pinned').notNull().default(false),
    /**
     * The leaf of the thread's active path (modules/chat/versions.ts): the thread's messages, as
     * listed and as later turns continue them, are this message and its ancestors.
     */
    activeMessageId: uuid('active_message_id'),
    /** conversation search (modules/chat/search-repo.ts): the title's English full text */
    search: tsvector('search').generatedAlwaysAs(sql`to_tsvector('english', title)`),
  },
  (t) => [
    index('chat_threads_ws_idx').on(t.teamId, t.workspaceId, t.updated),
    index('chat_threads_search_idx').using('gin', t.search),
    foreignKey({ columns: [t.teamId, t.workspaceId], foreignColumns: [workspaces.teamId, workspaces.id] }).onDelete('cascade'),
  ],
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
  ranking?: {
    lexical: { score: number; rank: number } | null;
    vector: { score: number; rank: number } | null;
    rerank?: { score: number; rank: number } | null;
  };
}

/** A tool the turn's model called (an MCP server's) and what it answered, stored on the answer's message. */
export interface StoredToolCall {
  id: string;
  name: string;
  /** JSON text, as the model wrote it */
  arguments: string;
  ok: boolean;
  /** the result's text (cut to the turn's limit), or why the call failed */
  content: string;
  durationMs: number;
  /** 1-based: the provider call that asked for it */
  step: number;
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
    /**
     * The message this one follows (null: the thread's first). Messages with the same parent are
     * versions of one another: edits of a question, regenerations of an answer (versions.ts).
     */
    parentId: uuid('parent_id'),
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
    /** the tools the answer's model called on the way to it, in order (null: none) */
    toolCalls: jsonb('tool_calls').$type<StoredToolCall[]>(),
    /** the user's images (sent to a vision model) or the generated ones (an image model's answer); null: none */
    images: jsonb('images').$type<StoredImage[]>(),
    created: created(),
    /** conversation search (modules/chat/search-repo.ts): the text's English full text, its first 100,000 characters */
    search: tsvector('search').generatedAlwaysAs(sql`to_tsvector('english', left(content, 100000))`),
  },
  (t) => [
    index('chat_messages_thread_idx').on(t.threadId, t.seq),
    index('chat_messages_search_idx').using('gin', t.search),
    /** a message's versions and its newest child (versions.ts) */
    index('chat_messages_parent_idx').on(t.parentId, t.seq),
  ],
);

/**
 * A thread's public read-only link (modules/chat/share.ts): one per thread; a snapshot, the path
 * that ended at `leafMessageId` when it was shared (messages are never changed once written).
 */
export const chatShares = pgTable(
  'chat_shares',
  {
    threadId: uuid('thread_id')
      .primaryKey()
      .references(() => chatThreads.id, { onDelete: 'cascade' }),
    /** 256 random bits, base64url: the link's secret (docs/DECISIONS.md, "Shared threads") */
    token: text('token').notNull(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    leafMessageId: uuid('leaf_message_id').notNull(),
    title: text('title').notNull(),
    created: created(),
  },
  (t) => [uniqueIndex('chat_shares_token_uq').on(t.token), index('chat_shares_team_idx').on(t.teamId)],
);

/** A team's chat settings (owner: modules/chat); a team without a row has the defaults. */
export const chatTeamSettings = pgTable('chat_team_settings', {
  teamId: uuid('team_id')
    .primaryKey()
    .references(() => teams.id, { onDelete: 'cascade' }),
  /** whether threads may be shared by link (team owner/admin) */
  sharing: boolean('sharing').notNull().default(true),
  updated: ts('updated').notNull().defaultNow(),
});

/** The prompt library (modules/chat/saved-prompts.ts): a team's prompts and each user's own. */
export const savedPrompts = pgTable(
  'saved_prompts',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    /** team: every member sees it (owners/admins change it); personal: its creator only */
    scope: text('scope', { enum: ['team', 'personal'] }).notNull(),
    title: text('title').notNull(),
    /** the text, with `{{name}}` variables filled in when it is used */
    content: text('content').notNull(),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [index('saved_prompts_team_idx').on(t.teamId, t.scope, t.userId)],
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
