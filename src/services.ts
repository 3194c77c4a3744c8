import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { ChatService } from './modules/chat/service.js';
import { ModelsService } from './modules/models/service.js';
import { PlusService } from './modules/plus/service.js';
import { PromptLogsService } from './modules/prompt-logs/service.js';
import { TeamsService } from './modules/teams/service.js';
import { WorkspacesService } from './modules/workspaces/service.js';
import type { SecretBox } from './security/secret-box.js';

/** The composition root: every service, built once per app over one database handle. */
export interface Services {
  teams: TeamsService;
  models: ModelsService;
  workspaces: WorkspacesService;
  chat: ChatService;
  promptLogs: PromptLogsService;
  plus: PlusService;
}

export function createServices(database: Database, config: Config, secrets: SecretBox): Services {
  const db = database.db;
  const teams = new TeamsService(db);
  const models = new ModelsService(db, secrets, config.providerUrlPolicy);
  const workspaces = new WorkspacesService(db, models);
  models.onChange((id) => workspaces.forgetModel(id));
  const promptLogs = new PromptLogsService(db, config.promptLogMaxRows);
  const chat = new ChatService(db, workspaces, models, promptLogs.repo, config.providerTimeouts);
  const plus = new PlusService(db, models, config.providerTimeouts, (caller, threadId) => chat.resolveThread(caller, threadId), config.ingest);
  chat.setRetriever(plus);
  return { teams, models, workspaces, chat, promptLogs, plus };
}
