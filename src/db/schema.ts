import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  doublePrecision,
  index,
  integer,
  jsonb,
  real,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * The one drizzle schema. `npm run db:generate` turns changes here into a new numbered SQL
 * migration in src/db/migrations, applied at start-up on PGlite and PostgreSQL alike.
 */

const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength)),
  toDriver: (v) => v,
});

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const created = () => ts('created').notNull().defaultNow();

export const teams = pgTable('teams', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  created: created(),
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

export const models = pgTable(
  'models',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** null for system models */
    teamId: uuid('team_id').references(() => teams.id, { onDelete: 'cascade' }),
    isSystem: boolean('is_system').notNull().default(false),
    name: text('name').notNull(),
    apiKeyEnc: text('api_key_enc'),
    apiKeyLast4: text('api_key_last4'),
    url: text('url'),
    connectionType: text('connection_type', { enum: ['URL', 'AZURE'] })
      .notNull()
      .default('URL'),
    apiBase: text('api_base', { enum: ['OPENAI', 'ANTHROPIC', 'GOOGLE'] })
      .notNull()
      .default('OPENAI'),
    icon: text('icon'),
    baseModel: text('base_model'),
    paramCount: bigint('param_count', { mode: 'number' }),
    computeType: text('compute_type'),
    architecture: text('architecture'),
    format: text('format'),
    engine: text('engine'),
    bitCount: integer('bit_count'),
    groupSize: integer('group_size'),
    contextWindow: integer('context_window'),
    promptMode: text('prompt_mode'),
    accuracy: doublePrecision('accuracy'),
    speed: doublePrecision('speed'),
    weight: doublePrecision('weight'),
    specialized: boolean('specialized').notNull().default(false),
    active: boolean('active').notNull().default(true),
    chatCredits: integer('chat_credits').notNull().default(1),
    internalUseOnly: boolean('internal_use_only').notNull().default(false),
    usesSystemPrompts: boolean('uses_system_prompts').notNull().default(true),
    imageGen: boolean('image_gen').notNull().default(false),
    hasVision: boolean('has_vision').notNull().default(false),
    instructionFollowing: boolean('instruction_following').notNull().default(true),
    settingsAvailable: jsonb('settings_available').$type<Array<{ fieldName: string; name: string; description: string }>>(),
    promptWrapper: jsonb('prompt_wrapper').$type<{ wrapperName: string; value: string } | null>(),
    modelRating: integer('model_rating'),
    // embeddings (issue 14): what the model is for, and the size of its vectors (configured, or found on first use)
    kind: text('kind', { enum: ['chat', 'embedding'] })
      .notNull()
      .default('chat'),
    embeddingDimensions: integer('embedding_dimensions'),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [index('models_team_idx').on(t.teamId)],
);

/** Which models a team uses: its own models and the system models it has added. */
export const teamModels = pgTable(
  'team_models',
  {
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    added: ts('added').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.teamId, t.modelId] })],
);

export const workspaces = pgTable(
  'workspaces',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    name: text('name').notNull(),
    chatHistoryType: text('chat_history_type', { enum: ['TEAM', 'USER'] }).notNull(),
    contextType: text('context_type', { enum: ['SHARED', 'PRIVATE'] }).notNull(),
    sharingType: text('sharing_type', { enum: ['TEAM', 'PRIVATE'] }).notNull(),
    greeting: text('greeting'),
    samplePrompts: jsonb('sample_prompts').$type<string[]>(),
    /** how a follow-up question is searched: with the previous question's key terms carried, or rewritten by the turn's model */
    followUpSearch: text('follow_up_search', { enum: ['carry', 'rewrite'] })
      .notNull()
      .default('carry'),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [index('workspaces_team_idx').on(t.teamId)],
);

export const workspaceModels = pgTable(
  'workspace_models',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    modelId: uuid('model_id')
      .notNull()
      .references(() => models.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    addedContext: text('added_context'),
    systemInstructions: text('system_instructions'),
    temperature: doublePrecision('temperature'),
    maxTokens: integer('max_tokens'),
    topP: doublePrecision('top_p'),
    n: integer('n'),
    frequencyPenalty: doublePrecision('frequency_penalty'),
    presencePenalty: doublePrecision('presence_penalty'),
    logitBias: jsonb('logit_bias').$type<Record<string, number>>(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.modelId] })],
);

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
  // retrieval (issue 14); absent on sources stored before it
  /** 1-based final rank among the candidates */
  rank?: number;
  /** where the chunk stood in each ranked list (null: not found by that search, or it did not run) */
  ranking?: { lexical: { score: number; rank: number } | null; vector: { score: number; rank: number } | null };
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
    created: created(),
    /** conversation search (modules/chat/search-repo.ts): the text's English full text, its first 100,000 characters */
    search: tsvector('search').generatedAlwaysAs(sql`to_tsvector('english', left(content, 100000))`),
  },
  (t) => [index('chat_messages_thread_idx').on(t.threadId, t.seq), index('chat_messages_search_idx').using('gin', t.search)],
);

/** One row per completion attempt. No foreign key to threads: deleting a thread keeps its logs. */
export const promptLogs = pgTable(
  'prompt_logs',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: integer('user_id').notNull(),
    workspaceId: uuid('workspace_id'),
    threadId: uuid('thread_id'),
    modelId: uuid('model_id'),
    modelName: text('model_name'),
    prompt: text('prompt').notNull(),
    response: text('response'),
    promptTokens: integer('prompt_tokens'),
    completionTokens: integer('completion_tokens'),
    latencyMs: integer('latency_ms'),
    /** pending while the provider is being called: a crash leaves the attempt visible, not lost */
    status: text('status', { enum: ['pending', 'ok', 'error', 'interrupted'] }).notNull(),
    error: text('error'),
    created: created(),
    /**
     * What the turn reserved against budgets in the database (PostgreSQL; opaque here, written and
     * read back by modules/usage): cleared when the turn settles; left on a log the stale sweep
     * finished, so the usage module's sweep can give a crashed node's reservation back, once.
     */
    reservation: jsonb('reservation'),
    /** a follow-up searched as rewritten by the turn's model: the query and what that call used (also in the turn's ledger row) */
    rewrite: jsonb('rewrite').$type<SearchRewrite>(),
    search: tsvector('search').generatedAlwaysAs(sql`to_tsvector('simple', coalesce(prompt, '') || ' ' || coalesce(response, ''))`),
  },
  (t) => [
    index('prompt_logs_team_created_idx').on(t.teamId, t.created),
    index('prompt_logs_search_idx').using('gin', t.search),
    // the sweep of logs a crash left pending runs on every node every minute: it reads only this
    index('prompt_logs_pending_idx')
      .on(t.created)
      .where(sql`${t.status} = 'pending'`),
    // reservations of abandoned turns, which the usage sweep gives back: no live log is ever in it
    index('prompt_logs_abandoned_reservation_idx')
      .on(t.id)
      .where(sql`${t.reservation} is not null and ${t.status} <> 'pending'`),
  ],
);

export const plusEntries = pgTable(
  'plus_entries',
  {
    id: uuid('id').primaryKey(),
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
     * Raised by the database (triggers of migration 0013) by every statement that inserts or
     * deletes chunks of the entry, however it does: what an in-memory lexical index of the
     * entry (retrieval/lexical-index/) checks that it is still current.
     */
    lexicalVersion: bigint('lexical_version', { mode: 'number' }).notNull().default(0),
    created: created(),
    updated: ts('updated').notNull().defaultNow(),
  },
  (t) => [index('plus_entries_team_idx').on(t.teamId)],
);

export const plusFiles = pgTable(
  'plus_files',
  {
    id: uuid('id').primaryKey(),
    plusId: uuid('plus_id')
      .notNull()
      .references(() => plusEntries.id, { onDelete: 'cascade' }),
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
    created: created(),
  },
  (t) => [index('plus_files_plus_idx').on(t.plusId), index('plus_files_thread_idx').on(t.threadId)],
);

export const plusChunks = pgTable(
  'plus_chunks',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    fileId: uuid('file_id')
      .notNull()
      .references(() => plusFiles.id, { onDelete: 'cascade' }),
    plusId: uuid('plus_id').notNull(),
    idx: integer('idx').notNull(),
    fileData: text('file_data').notNull(),
    fileDataProcessed: text('file_data_processed').notNull(),
    tokenSize: integer('token_size').notNull(),
    // retrieval (issue 14): the chunk's section headings (src/ingest/chunking/section-headings.ts),
    // indexed with weight A after the text (weight D, positions unchanged) so that a search can
    // match them and weigh them as a field of their own ('lexeme:A' in a tsquery)
    heading: text('heading'),
    search: tsvector('search').generatedAlwaysAs(
      sql`to_tsvector('english', file_data_processed) || setweight(to_tsvector('english', coalesce(heading, '')), 'A')`,
    ),
  },
  (t) => [
    index('plus_chunks_file_idx').on(t.fileId, t.idx),
    index('plus_chunks_plus_idx').on(t.plusId),
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
    plusId: uuid('plus_id')
      .notNull()
      .references(() => plusEntries.id, { onDelete: 'cascade' }),
    lexeme: text('lexeme').notNull(),
    df: integer('df').notNull(),
  },
  (t) => [primaryKey({ columns: [t.plusId, t.lexeme] })],
);

/**
 * Instance-wide facts every node must agree on, by name. `secret_key_fingerprint`: an HMAC of
 * the SECRET_KEY (never the key), so a node with another key refuses to start.
 */
export const instanceSettings = pgTable('instance_settings', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  created: created(),
});

// ---------------------------------------------------------------------------------------------
// Usage ledger, budgets and rate limits (modules/usage, issue 12). Owned by modules/usage; the
// turn's two statements embed its SQL fragments (usageSql), so the chat repo writes these rows too.
// ---------------------------------------------------------------------------------------------

/**
 * One row per completion attempt that reached (or tried to reach) a provider, written in the
 * same statement as the turn's answer. `id` is the turn's prompt-log id: a turn is counted once.
 * No foreign keys but the team: deleting a user, key, workspace or model keeps the spend.
 */
export const usageLedger = pgTable(
  'usage_ledger',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    userId: integer('user_id').notNull(),
    /** null when the caller signed in without an API key */
    apiKeyId: uuid('api_key_id'),
    workspaceId: uuid('workspace_id'),
    modelId: uuid('model_id'),
    modelName: text('model_name'),
    promptTokens: integer('prompt_tokens').notNull(),
    completionTokens: integer('completion_tokens').notNull(),
    credits: doublePrecision('credits').notNull(),
    status: text('status', { enum: ['ok', 'error', 'interrupted'] }).notNull(),
    created: created(),
  },
  (t) => [index('usage_ledger_team_created_idx').on(t.teamId, t.created), index('usage_ledger_user_created_idx').on(t.userId, t.created)],
);

/**
 * A budget (credits per period) and/or a rate limit (requests per minute) on a team, a user or an
 * API key. The counters live on the row so that one conditional UPDATE reserves against it on
 * any node: `used` is the spend (settled + reserved in flight) of the period that began at
 * `windowStart`; `rateCount` the requests of the minute that began at `rateWindow`.
 */
export const budgets = pgTable(
  'budgets',
  {
    id: uuid('id').primaryKey(),
    teamId: uuid('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    scope: text('scope', { enum: ['team', 'user', 'apiKey'] }).notNull(),
    /** the team's uuid, the user's integer id as text, or the API key's uuid */
    scopeId: text('scope_id').notNull(),
    period: text('period', { enum: ['day', 'month', 'total'] }).notNull(),
    credits: doublePrecision('credits'),
    requestsPerMinute: integer('requests_per_minute'),
    used: doublePrecision('used').notNull().default(0),
    windowStart: ts('window_start'),
    rateCount: integer('rate_count').notNull().default(0),
    rateWindow: ts('rate_window'),
    created: created(),
  },
  (t) => [uniqueIndex('budgets_scope_uq').on(t.teamId, t.scope, t.scopeId, t.period)],
);

// ---------------------------------------------------------------------------------------------
// Sign-in (issue 10; owner: modules/teams, auth-repo.ts). Credentials live beside `users`, not in
// it: a user list never loads a password hash, and the block merges without touching `users`.
// ---------------------------------------------------------------------------------------------

/** A user's password: `scrypt$N$r$p$salt$hash` (security/passwords.ts). No row: no password yet. */
export const userPasswords = pgTable('user_passwords', {
  userId: integer('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  hash: text('hash').notNull(),
  updated: ts('updated').notNull().defaultNow(),
});

/** Browser sessions: the cookie's SHA-256, never the cookie. `expires` slides forward with use. */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tokenHash: text('token_hash').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    created: created(),
    expires: ts('expires').notNull(),
  },
  (t) => [uniqueIndex('sessions_token_uq').on(t.tokenHash), index('sessions_user_idx').on(t.userId), index('sessions_expires_idx').on(t.expires)],
);

/** One-use links with which a new user sets their password (the token's SHA-256 only). */
export const userInvites = pgTable(
  'user_invites',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tokenHash: text('token_hash').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    created: created(),
    expires: ts('expires').notNull(),
    used: ts('used'),
  },
  (t) => [uniqueIndex('user_invites_token_uq').on(t.tokenHash), index('user_invites_user_idx').on(t.userId)],
);

/**
 * Sign-in attempts per key (`email:<address>` or `ip:<address>`) in a fixed window, shared by
 * every node: an attempt is counted before its password is checked, so concurrent guesses on
 * several nodes cannot exceed the limit.
 */
export const loginThrottle = pgTable(
  'login_throttle',
  {
    key: text('key').primaryKey(),
    windowStart: ts('window_start').notNull(),
    attempts: integer('attempts').notNull(),
  },
  (t) => [index('login_throttle_window_idx').on(t.windowStart)],
);

// ---- issue 11 (OpenAI-compatible API): the Plus entries a workspace always draws on ----------

/**
 * A workspace's own Plus entries (`Workspace.plusIds`), in order: every chat turn in the
 * workspace draws context from them (those the caller may see), beside the request's `plusIds`.
 * Deleting the entry or the workspace removes the row.
 */
export const workspacePlus = pgTable(
  'workspace_plus',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    plusId: uuid('plus_id')
      .notNull()
      .references(() => plusEntries.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.plusId] }), index('workspace_plus_plus_idx').on(t.plusId)],
);

// ---- Embeddings and hybrid retrieval (issue 14; modules/embeddings owns these tables) ---------

/** The embedding model a team's Plus entries are embedded with (one per team; none: full-text only). */
export const teamEmbeddingModels = pgTable('team_embedding_models', {
  teamId: uuid('team_id')
    .primaryKey()
    .references(() => teams.id, { onDelete: 'cascade' }),
  modelId: uuid('model_id')
    .notNull()
    .references(() => models.id, { onDelete: 'cascade' }),
  updated: ts('updated').notNull().defaultNow(),
});

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
    fileId: uuid('file_id').notNull(),
    plusId: uuid('plus_id').notNull(),
    modelId: uuid('model_id').notNull(),
    embedding: real('embedding').array().notNull(),
  },
  (t) => [index('plus_chunk_vectors_plus_idx').on(t.plusId, t.modelId), index('plus_chunk_vectors_file_idx').on(t.fileId)],
);
