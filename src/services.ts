import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { ChatService } from './modules/chat/service.js';
import { TurnService } from './modules/chat/turns.js';
import { EmbeddingsService } from './modules/embeddings/service.js';
import { ModelsService } from './modules/models/service.js';
import { PlusService } from './modules/plus/service.js';
import { PromptLogsService, SWEEP_MARGIN_MS } from './modules/prompt-logs/service.js';
import { TeamsService } from './modules/teams/service.js';
import { WorkspacesService } from './modules/workspaces/service.js';
import type { SecretBox } from './security/secret-box.js';

/**
 * The composition root: every service, built once per app over one database handle. Each
 * receives what it uses through its constructor, in dependency order (no setters, no closures
 * back into a later service): teams; models; workspaces → models; prompt-logs; embeddings → models; plus → models, embeddings;
 * chat → workspaces, plus; turns → workspaces, models, plus, prompt-logs. `npm run lint` checks
 * that the modules' imports follow the same order (scripts/check-module-graph.ts).
 */
export interface Services {
  teams: TeamsService;
  models: ModelsService;
  workspaces: WorkspacesService;
  promptLogs: PromptLogsService;
  embeddings: EmbeddingsService;
  plus: PlusService;
  chat: ChatService;
  turns: TurnService;
}

export function createServices(
  database: Database,
  config: Config,
  secrets: SecretBox,
  onError: (err: unknown, what: string) => void = () => {},
): Services {
  const db = database.db;
  const teams = new TeamsService(db);
  const models = new ModelsService(db, secrets, config.providerUrlPolicy);
  const workspaces = new WorkspacesService(db, models);
  models.onChange((id) => workspaces.forgetModel(id));
  const promptLogs = new PromptLogsService(db, {
    maxRows: config.promptLogMaxRows,
    staleAfterMs: config.providerTimeouts.totalMs + SWEEP_MARGIN_MS,
    sweepEveryMs: config.promptLogSweepMs,
  });
  const embeddings = new EmbeddingsService(database, models, config.providerTimeouts, config.embeddings, onError);
  const plus = new PlusService(db, models, config.providerTimeouts, config.ingest, embeddings);
  const chat = new ChatService(db, workspaces, plus);
  const turns = new TurnService(db, workspaces, models, plus, promptLogs, config.providerTimeouts);
  return { teams, models, workspaces, promptLogs, embeddings, plus, chat, turns };
}
