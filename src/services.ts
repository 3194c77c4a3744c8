import { ScimService } from './modules/scim/service.js';
import { AuditService } from './modules/audit/service.js';
import { RETENTION_EVERY_MS, RetentionService } from './modules/retention/service.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { closing, periodic, startedBy, type Job } from './jobs.js';
import { closeProviderConnections } from './providers/index.js';
import { ImagePool } from './media/pool.js';
import { ChatImages } from './modules/chat/images.js';
import { ChatService } from './modules/chat/service.js';
import { SavedPromptsService } from './modules/chat/saved-prompts.js';
import { ShareService } from './modules/chat/share.js';
import { AnswerJournal } from './modules/chat/answer-journal.js';
import { TurnService } from './modules/chat/turns.js';
import { EmbeddingsService } from './modules/embeddings/service.js';
import { McpService } from './modules/mcp/service.js';
import { ModelsService } from './modules/models/service.js';
import { OpenAICompatService } from './modules/openai-compat/service.js';
import { PlusService, UPLOAD_SWEEP_EVERY_MS } from './modules/plus/service.js';
import { LexicalIndexes } from './retrieval/lexical-index/indexes.js';
import { PromptLogsService, SWEEP_MARGIN_MS } from './modules/prompt-logs/service.js';
import { AuthService } from './modules/teams/auth-service.js';
import { OidcService } from './modules/teams/oidc-service.js';
import { TeamsService } from './modules/teams/service.js';
import { budgetCounters, UsageService } from './modules/usage/service.js';
import { WorkspaceCache } from './modules/workspaces/cache.js';
import { WorkspacesService } from './modules/workspaces/service.js';
import type { SecretBox } from './security/secret-box.js';

/**
 * The composition root: every service, built once per app over one database handle. Each
 * receives what it uses through its constructor, in dependency order (no setters, no closures
 * back into a later service, no listener registered afterwards): audit (reading the log; every
 * service writes it through audit/record.ts in its own transactions); auth (sign-in, part of the
 * teams module); teams → auth; oidc → teams, auth; the workspaces' settings cache (WorkspaceCache,
 * before models, which drop a changed model's workspaces from it as a ModelDependent); models;
 * mcp; embeddings → models; plus → models, embeddings; workspaces → models, plus (as the narrow
 * PlusVisibility interface, since the plus module imports workspace types), mcp, the cache; prompt-logs;
 * usage; chat → workspaces, plus; turns → workspaces, models, plus, prompt-logs, usage, mcp (both with
 * the chat's images over the image worker pool, src/media/); compat
 * (openai-compat) → workspaces, turns; retention (the settings and the purge job, over the chat
 * and prompt-log repositories); scim → teams. `npm run lint` checks
 * that the modules' imports follow the same order (scripts/check-module-graph.ts).
 */
export interface Services {
  audit: AuditService;
  auth: AuthService;
  teams: TeamsService;
  /** OpenID Connect sign-in; null when not configured */
  oidc: OidcService | null;
  models: ModelsService;
  mcp: McpService;
  workspaces: WorkspacesService;
  promptLogs: PromptLogsService;
  embeddings: EmbeddingsService;
  plus: PlusService;
  usage: UsageService;
  chat: ChatService;
  turns: TurnService;
  share: ShareService;
  prompts: SavedPromptsService;
  compat: OpenAICompatService;
  retention: RetentionService;
  scim: ScimService;
  /** the worker threads that read images (closed with the app) */
  imagePool: ImagePool;
}

/** How long the embedded database's single process keeps an API key's principal and a team's budgets (its own writes invalidate them at once). */
const SOLE_USER_CACHE_MS = 2_000;

export function createServices(database: Database, config: Config, secrets: SecretBox, onError: (err: unknown, what: string) => void = () => {}): Services {
  const db = database.db;
  // Reads that every request repeats (an API key, a team's budgets) are cached in process only
  // where this process is the database's one user; on PostgreSQL other nodes change them.
  const soleUserCacheMs = database.kind === 'pglite' ? SOLE_USER_CACHE_MS : 0;
  const audit = new AuditService(db, database.bulk);
  const auth = new AuthService(db, config.auth);
  const teams = new TeamsService(db, auth, soleUserCacheMs);
  const oidc = config.auth.oidc ? new OidcService(db, config.auth.oidc, teams, auth) : null;
  const workspaceCache = new WorkspaceCache();
  const models = new ModelsService(db, secrets, config.providerUrlPolicy, [workspaceCache]);
  // Plus is built before workspaces (it needs only models): a workspace's plusIds are checked against it.
  const embeddings = new EmbeddingsService(database, models, config.providerTimeouts, config.embeddings, onError);
  const { mode, maxChunks } = config.lexicalIndex;
  const lexical =
    (mode === 'auto' ? database.kind === 'pglite' : mode === 'on') && maxChunks > 0
      ? new LexicalIndexes(database.bulk, maxChunks, (err, plusId) => onError(err, `lexical index of Plus entry ${plusId}`))
      : null;
  const plus = new PlusService(db, models, config.providerTimeouts, config.ingest, embeddings, lexical, database.bulk);
  const mcp = new McpService(db, secrets, { urlPolicy: config.providerUrlPolicy, callTimeoutMs: config.mcpCallTimeoutMs }, (err, id) =>
    onError(err, `MCP server ${id} could not be listed: its tools were left out of the turn`),
  );
  const workspaces = new WorkspacesService(db, models, plus, mcp, workspaceCache);
  const promptLogs = new PromptLogsService(
    db,
    { maxRows: config.promptLogMaxRows, staleAfterMs: config.providerTimeouts.totalMs + SWEEP_MARGIN_MS },
    database.bulk,
  );
  const usage = new UsageService(db, budgetCounters(database), soleUserCacheMs);
  const imagePool = new ImagePool();
  const images = new ChatImages(db, imagePool);
  const chat = new ChatService(db, workspaces, plus, images);
  // The embedded database on disk is this process's alone: an answer is acknowledged once journaled (chat/answer-journal.ts).
  // Only with the database on its own thread: on the application's, the statement runs on the event loop before the answer could go out.
  const journal = database.kind === 'pglite' && config.databaseUrl === null && config.embeddedDbThread ? AnswerJournal.open(config.dataDir) : null;
  const turns = new TurnService(
    db,
    workspaces,
    models,
    plus,
    promptLogs,
    config.providerTimeouts,
    usage,
    mcp,
    images,
    (why) => onError(new Error(why), 'follow-up rewrite (searched with carried terms instead)'),
    journal,
    (err) => onError(err, 'storing an answer already sent (it stays in the answer journal for the next start)'),
  );
  const share = new ShareService(db, chat, plus);
  const compat = new OpenAICompatService(workspaces, turns);
  const prompts = new SavedPromptsService(db);
  const retention = new RetentionService(db);
  const scim = new ScimService(db, teams);
  return {
    audit,
    auth,
    teams,
    oidc,
    models,
    mcp,
    workspaces,
    promptLogs,
    embeddings,
    plus,
    usage,
    chat,
    turns,
    share,
    prompts,
    compat,
    retention,
    scim,
    imagePool,
  };
}

/**
 * The services' background work, in start order (stopped in the reverse one, src/jobs.ts): first
 * what requests and sweeps use (the worker pools, MCP connections), then the sweeps and the
 * embedding worker, which stop before them. Every sweep is safe on every node.
 */
export function serviceJobs(s: Services, config: Config, onError: (err: unknown, what: string) => void): Job[] {
  return [
    closing('image workers', () => s.imagePool.close()),
    closing('ingest workers and lexical indexes', () => s.plus.close()),
    closing('MCP connections', () => s.mcp.close()),
    closing('model provider connections', () => closeProviderConnections()),
    // Finish prompt logs a crash left pending: at start, then periodically.
    periodic(
      'prompt log sweep',
      config.promptLogSweepMs,
      () => s.promptLogs.sweep(),
      (err) => onError(err, 'prompt log sweep failed'),
    ),
    // ... and give back the budget reservations of the turns it finished (PostgreSQL).
    periodic(
      'reservation sweep',
      config.promptLogSweepMs,
      () => s.usage.releaseAbandoned(),
      (err) => onError(err, 'reservation sweep failed'),
    ),
    // Delete files an upload left storing (a crash mid-upload): at start, then periodically.
    periodic(
      'unfinished upload sweep',
      UPLOAD_SWEEP_EVERY_MS,
      () => s.plus.sweepUnfinished(),
      (err) => onError(err, 'unfinished upload sweep failed'),
    ),
    // Each team's purge locks its settings row (SKIP LOCKED): nodes share the work.
    periodic(
      'retention purge',
      RETENTION_EVERY_MS,
      () => s.retention.purge(),
      (err) => onError(err, 'retention purge failed'),
    ),
    // Embed Plus files in the background (EMBEDDING_WORKER_INTERVAL_MS; 0: never).
    startedBy('embedding worker', () => s.embeddings.start()),
  ];
}
