import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { ImagePool } from './media/pool.js';
import { ChatImages } from './modules/chat/images.js';
import { ChatService } from './modules/chat/service.js';
import { TurnService } from './modules/chat/turns.js';
import { EmbeddingsService } from './modules/embeddings/service.js';
import { ModelsService } from './modules/models/service.js';
import { OpenAICompatService } from './modules/openai-compat/service.js';
import { PlusService } from './modules/plus/service.js';
import { LexicalIndexes } from './retrieval/lexical-index/indexes.js';
import { PromptLogsService, SWEEP_MARGIN_MS } from './modules/prompt-logs/service.js';
import { AuthService } from './modules/teams/auth-service.js';
import { TeamsService } from './modules/teams/service.js';
import { budgetCounters, UsageService } from './modules/usage/service.js';
import { WorkspacesService } from './modules/workspaces/service.js';
import type { SecretBox } from './security/secret-box.js';

/**
 * The composition root: every service, built once per app over one database handle. Each
 * receives what it uses through its constructor, in dependency order (no setters, no closures
 * back into a later service): auth (sign-in, part of the teams module); teams → auth; models;
 * embeddings → models; plus → models, embeddings; workspaces → models, plus (as the narrow
 * PlusVisibility interface, since the plus module imports workspace types); prompt-logs; usage;
 * chat → workspaces, plus; turns → workspaces, models, plus, prompt-logs, usage (both with the chat's images over the
 * image worker pool, src/media/); compat
 * (openai-compat) → workspaces, turns. `npm run lint` checks
 * that the modules' imports follow the same order (scripts/check-module-graph.ts).
 */
export interface Services {
  auth: AuthService;
  teams: TeamsService;
  models: ModelsService;
  workspaces: WorkspacesService;
  promptLogs: PromptLogsService;
  embeddings: EmbeddingsService;
  plus: PlusService;
  usage: UsageService;
  chat: ChatService;
  turns: TurnService;
  compat: OpenAICompatService;
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
  const auth = new AuthService(db, config.auth);
  const teams = new TeamsService(db, auth, soleUserCacheMs);
  const models = new ModelsService(db, secrets, config.providerUrlPolicy);
  // Plus is built before workspaces (it needs only models): a workspace's plusIds are checked against it.
  const embeddings = new EmbeddingsService(database, models, config.providerTimeouts, config.embeddings, onError);
  const { mode, maxChunks } = config.lexicalIndex;
  const lexical =
    (mode === 'auto' ? database.kind === 'pglite' : mode === 'on') && maxChunks > 0
      ? new LexicalIndexes(db, maxChunks, (err, plusId) => onError(err, `lexical index of Plus entry ${plusId}`))
      : null;
  const plus = new PlusService(db, models, config.providerTimeouts, config.ingest, embeddings, lexical);
  const workspaces = new WorkspacesService(db, models, plus);
  models.onChange((id) => workspaces.forgetModel(id));
  const promptLogs = new PromptLogsService(db, {
    maxRows: config.promptLogMaxRows,
    staleAfterMs: config.providerTimeouts.totalMs + SWEEP_MARGIN_MS,
    sweepEveryMs: config.promptLogSweepMs,
  });
  const usage = new UsageService(db, budgetCounters(database), soleUserCacheMs);
  const imagePool = new ImagePool();
  const images = new ChatImages(db, imagePool);
  const chat = new ChatService(db, workspaces, plus, images);
  const turns = new TurnService(db, workspaces, models, plus, promptLogs, config.providerTimeouts, usage, images, (why) =>
    onError(new Error(why), 'follow-up rewrite (searched with carried terms instead)'),
  );
  const compat = new OpenAICompatService(workspaces, turns);
  return { auth, teams, models, workspaces, promptLogs, embeddings, plus, usage, chat, turns, compat, imagePool };
}
