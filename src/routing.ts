import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { authenticate } from './http/auth.js';
import { registerOpenAIErrorScope } from './http/openai-errors.js';
import { ProblemSchema } from './http/schemas.js';
import { rejectNulInBody, rejectNulInUrl } from './http/text-guard.js';
import { requireJsonBody } from './http/validation.js';
import { registerWebApp } from './http/web-app.js';
import { auditRoutes } from './modules/audit/routes.js';
import { AuditEntry } from './modules/audit/schema.js';
import { chatRoutes } from './modules/chat/routes.js';
import {
  ChatAnswer,
  ChatSearchHit,
  ChatShare,
  ChatSharing,
  ChatStreamEvent,
  ChatThread,
  ChatThreadExport,
  ChatThreadFull,
  ImageRefSchema,
  SavedPrompt,
  SharedThread,
} from './modules/chat/schema.js';
import { savedPromptRoutes } from './modules/chat/saved-prompt-routes.js';
import { shareRoutes } from './modules/chat/share-routes.js';
import { embeddingRoutes } from './modules/embeddings/routes.js';
import { mcpRoutes } from './modules/mcp/routes.js';
import { McpServer, McpServerTest } from './modules/mcp/schema.js';
import { modelRoutes } from './modules/models/routes.js';
import { Model } from './modules/models/schema.js';
import { openaiCompatRoutes } from './modules/openai-compat/routes.js';
import { OpenAIChatCompletion, OpenAIChatCompletionChunk, OpenAIError, OpenAIImagesResponse, OpenAIModelList } from './modules/openai-compat/schema.js';
import { evaluationRoutes } from './modules/plus/evaluation-routes.js';
import { plusRoutes } from './modules/plus/routes.js';
import { Plus, PlusSummary } from './modules/plus/schema.js';
import { promptLogRoutes } from './modules/prompt-logs/routes.js';
import { PromptLog } from './modules/prompt-logs/schema.js';
import { retentionRoutes } from './modules/retention/routes.js';
import { TeamSettings } from './modules/retention/schema.js';
import { scimRoutes, scimTokenRoutes } from './modules/scim/routes.js';
import { authRoutes } from './modules/teams/auth-routes.js';
import { oidcRoutes } from './modules/teams/oidc-routes.js';
import { teamRoutes } from './modules/teams/routes.js';
import { ApiKey, CreatedApiKey, Team, User } from './modules/teams/schema.js';
import { usageRoutes } from './modules/usage/routes.js';
import { Budget, UsageRow } from './modules/usage/schema.js';
import { workspaceRoutes } from './modules/workspaces/routes.js';
import { Workspace, WorkspaceModel } from './modules/workspaces/schema.js';
import type { Services } from './services.js';

/** The `$id` schemas several routes share (registered once, before the routes: src/http/server.ts). */
export const SHARED_SCHEMAS = [
  ProblemSchema,
  AuditEntry,
  TeamSettings,
  User,
  Team,
  ApiKey,
  CreatedApiKey,
  Model,
  McpServer,
  McpServerTest,
  WorkspaceModel,
  Workspace,
  ImageRefSchema,
  ChatAnswer,
  ChatStreamEvent,
  ChatThread,
  ChatThreadFull,
  ChatThreadExport,
  ChatSearchHit,
  ChatShare,
  ChatSharing,
  SharedThread,
  SavedPrompt,
  PromptLog,
  Plus,
  PlusSummary,
  Budget,
  UsageRow,
  OpenAIError,
  OpenAIChatCompletion,
  OpenAIChatCompletionChunk,
  OpenAIModelList,
  OpenAIImagesResponse,
];

/** /api/v1 answers at least this large are compressed when the client accepts it. */
const COMPRESS_THRESHOLD_BYTES = 8 * 1024;

/**
 * The hooks of the two authenticated APIs, /api/v1 and /v1, defined once: NUL bytes refused in
 * the URL, the caller authenticated (one hook for both), JSON routes refusing other media types
 * before the body is read, NUL bytes refused in the body.
 */
function guardApi(scope: FastifyInstance, auth: ReturnType<typeof authenticate>): void {
  scope.addHook('onRequest', rejectNulInUrl);
  scope.addHook('onRequest', auth);
  scope.addHook('onRequest', requireJsonBody);
  scope.addHook('preValidation', rejectNulInBody);
}

/** /api/v1: one plugin a module, each given only the services it uses. */
async function apiRoutes(api: FastifyInstance, s: Services, config: Config): Promise<void> {
  const { publicUrl } = config.auth;
  await api.register(authRoutes, { auth: s.auth, publicUrl });
  await api.register(oidcRoutes, { oidc: s.oidc, auth: s.auth, publicUrl });
  await api.register(teamRoutes, { teams: s.teams, publicUrl });
  await api.register(modelRoutes, { models: s.models });
  await api.register(mcpRoutes, { mcp: s.mcp });
  await api.register(workspaceRoutes, { workspaces: s.workspaces });
  await api.register(promptLogRoutes, { logs: s.promptLogs });
  await api.register(chatRoutes, {
    chat: s.chat,
    turns: s.turns,
    limits: config.upload,
    heartbeatMs: config.sseHeartbeatMs,
    bodyLimitBytes: config.bodyLimitBytes,
  });
  await api.register(shareRoutes, { share: s.share, publicUrl });
  await api.register(savedPromptRoutes, { prompts: s.prompts });
  await api.register(plusRoutes, { plus: s.plus, limits: config.upload });
  await api.register(evaluationRoutes, { evaluation: s.plus.evaluation });
  await api.register(usageRoutes, { usage: s.usage });
  await api.register(embeddingRoutes, { embeddings: s.embeddings });
  await api.register(auditRoutes, { audit: s.audit });
  await api.register(retentionRoutes, { retention: s.retention });
  await api.register(scimTokenRoutes, { scim: s.scim });
}

/**
 * Every route, over the built services: the probes and the API document, /api/v1, SCIM at
 * /scim/v2, the web app at `/`, and the OpenAI-compatible /v1.
 */
export async function registerRoutes(
  app: FastifyInstance,
  s: Services,
  opts: { config: Config; database: Database; allowedMethods: (path: string) => string[] },
): Promise<void> {
  const { config, database, allowedMethods } = opts;
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    try {
      await database.ping();
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'database unreachable' });
    }
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  const auth = authenticate(s.teams, s.auth, config.auth.publicUrl);
  await app.register(
    async (api) => {
      // Large JSON and CSV answers (a long thread, a page of logs) go compressed; small ones and
      // event streams as they are (compressing a few hundred bytes costs more than it saves).
      await api.register(compress, {
        global: true,
        threshold: COMPRESS_THRESHOLD_BYTES,
        encodings: ['br', 'gzip'],
        customTypes: /^(?:application\/(?:json|problem\+json)|text\/csv)\b/,
      });
      guardApi(api, auth);
      await apiRoutes(api, s, config);
    },
    { prefix: '/api/v1' },
  );
  // SCIM 2.0 for identity providers (docs/API.md, "SCIM provisioning"): its own token, body parser and error shape.
  await app.register(
    async (scim) => {
      scim.addHook('onRequest', rejectNulInUrl);
      await scim.register(scimRoutes, { scim: s.scim });
    },
    { prefix: '/scim/v2' },
  );
  // The web app at `/`: files of the build, and index.html for the app's own paths.
  registerWebApp(app, { webDir: config.webDir, shareExists: (token) => s.share.exists(token) });
  // The OpenAI-compatible API (docs/API.md, "OpenAI-compatible API"): the same hooks, errors
  // rendered as {error: {message, type, param, code}}.
  await app.register(
    async (v1) => {
      registerOpenAIErrorScope(v1, allowedMethods);
      guardApi(v1, auth);
      await v1.register(openaiCompatRoutes, { compat: s.compat, heartbeatMs: config.sseHeartbeatMs, bodyLimitBytes: config.bodyLimitBytes });
    },
    { prefix: '/v1' },
  );
}
