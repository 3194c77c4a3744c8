import { scimRoutes, scimTokenRoutes } from './modules/scim/routes.js';
import { auditRoutes } from './modules/audit/routes.js';
import { AuditEntry } from './modules/audit/schema.js';
import { retentionRoutes } from './modules/retention/routes.js';
import { TeamSettings } from './modules/retention/schema.js';
import Fastify, { LogController, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import multipart from '@fastify/multipart';
import compress from '@fastify/compress';
import swagger from '@fastify/swagger';
import { registerDocs } from './http/docs.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { databaseOptions, openDatabase, type Database } from './db/client.js';
import { authenticate } from './http/auth.js';
import { lazySerializers } from './http/lazy-serializers.js';
import { registerOpenAIErrorScope, routerErrors } from './http/openai-errors.js';
import { registerProblemHandlers } from './http/problem.js';
import { requestId, sendRequestId } from './http/request-id.js';
import { setSecurityHeaders } from './http/security-headers.js';
import { ProblemSchema } from './http/schemas.js';
import { rejectNulInBody, rejectNulInUrl } from './http/text-guard.js';
import { openapiTransform, OPENAPI_TAGS } from './http/openapi.js';
import { registerWebApp } from './http/web-app.js';
import { requireJsonBody, validatorCompiler } from './http/validation.js';
import { preloadTokenizer } from './ingest/tokens.js';
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
  SavedPrompt,
  SharedThread,
  ImageRefSchema,
} from './modules/chat/schema.js';
import { savedPromptRoutes } from './modules/chat/saved-prompt-routes.js';
import { shareRoutes } from './modules/chat/share-routes.js';
import { embeddingRoutes } from './modules/embeddings/routes.js';
import { mcpRoutes } from './modules/mcp/routes.js';
import { McpServer, McpServerTest } from './modules/mcp/schema.js';
import { modelRoutes } from './modules/models/routes.js';
import { openaiCompatRoutes } from './modules/openai-compat/routes.js';
import { OpenAIChatCompletion, OpenAIChatCompletionChunk, OpenAIError, OpenAIImagesResponse, OpenAIModelList } from './modules/openai-compat/schema.js';
import { evaluationRoutes } from './modules/plus/evaluation-routes.js';
import { plusRoutes } from './modules/plus/routes.js';
import { Plus, PlusSummary } from './modules/plus/schema.js';
import { promptLogRoutes } from './modules/prompt-logs/routes.js';
import { PromptLog } from './modules/prompt-logs/schema.js';
import { Model } from './modules/models/schema.js';
import { authRoutes } from './modules/teams/auth-routes.js';
import { oidcRoutes } from './modules/teams/oidc-routes.js';
import type { OidcService } from './modules/teams/oidc-service.js';
import { teamRoutes } from './modules/teams/routes.js';
import { usageRoutes } from './modules/usage/routes.js';
import { Budget, UsageRow } from './modules/usage/schema.js';
import { ApiKey, Team, User } from './modules/teams/schema.js';
import { workspaceRoutes } from './modules/workspaces/routes.js';
import { Workspace, WorkspaceModel } from './modules/workspaces/schema.js';
import { registerObservability, startTracingIfConfigured } from './observability/http.js';
import { serveAdminSocket } from './ops/admin-socket.js';
import { openInstanceSecrets } from './security/instance-key.js';
import { createServices, type Services } from './services.js';

export interface App {
  app: FastifyInstance;
  services: Services;
  database: Database;
  /** the generated instance-admin key when this start bootstrapped an empty database without ADMIN_API_KEY */
  generatedAdminKey: string | null;
  /** the instance admin's invite token when this start bootstrapped an empty database without ADMIN_PASSWORD (main.ts prints its URL) */
  adminInviteToken: string | null;
  /** Start, in the background, the work deferred past readiness (request validators, response serializers, tokenizer). */
  warmUp(): void;
}

export const SHARED_SCHEMAS = [
  ProblemSchema,
  AuditEntry,
  TeamSettings,
  User,
  Team,
  ApiKey,
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

/**
 * `get()`'s object, looked up on each use: what routes are given at registration, before the
 * services exist (they are built once the database is open, before the first request).
 */
function late<T extends object>(get: () => T | undefined, name: string): T {
  return new Proxy({} as T, {
    get(_target, key) {
      const target = get();
      if (!target) throw new Error(`the ${name} service is used before the database is open`);
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** /api/v1 answers at least this large are compressed when the client accepts it. */
const COMPRESS_THRESHOLD_BYTES = 8 * 1024;

/** Fastify's `trustProxy`; a hop count becomes the function Fastify would build from it (its types take no number). */
function trustProxyOption(v: false | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof v === 'number' ? (_address, hop) => hop < v : v;
}

/**
 * Build the whole application: database (migrated), services, HTTP routes. Production (main.ts)
 * and the tests call this same function, so they run the same validators and plugins.
 */
export async function buildApp(
  config: Config,
  opts: { logger?: boolean; serverFactory?: FastifyServerFactory; database?: Database | Promise<Database> } = {},
): Promise<App> {
  // main.ts starts opening the database before this module loads and hands over the promise
  // (owned from here on); the HTTP scaffolding below is built while it opens.
  // Tracing starts before the database opens, so that its statements are traced (main.ts starts it earlier still).
  if (!opts.database) await startTracingIfConfigured(config.tracing);
  const opening = Promise.resolve(opts.database ?? openDatabase(databaseOptions(config)));
  opening.catch(() => undefined); // awaited below
  let database: Database | null = null;
  try {
    const serializers = lazySerializers();
    const validators = validatorCompiler();
    const app = Fastify({
      logger:
        opts.logger === false
          ? false
          : {
              level: config.logLevel,
              redact: {
                paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["api-key"]', 'req.headers["x-api-key"]', 'res.headers["set-cookie"]'],
                censor: '[redacted]',
              },
            },
      bodyLimit: config.bodyLimitBytes,
      // Per-request lines only at debug/trace: at info they would cost more than the gateway itself.
      logController: new LogController({ disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace' }),
      return503OnClosing: true,
      requestIdHeader: false,
      genReqId: requestId,
      frameworkErrors: routerErrors,
      ...(opts.serverFactory ? { serverFactory: opts.serverFactory } : {}),
      forceCloseConnections: 'idle',
      // Whether X-Forwarded-Proto/-For/-Host are believed: the Secure cookie flag and the login throttle's client address depend on it.
      trustProxy: trustProxyOption(config.auth.trustProxy),
      // Both compilers are ours (lazy), so Fastify never loads its default Ajv compiler (start-up time).
      schemaController: { compilersFactory: { buildValidator: validators.buildValidator, buildSerializer: serializers.buildSerializer } },
    }).withTypeProvider<TypeBoxTypeProvider>();

    // First of all hooks: every answer carries the security headers and its request id, whoever sends it.
    app.addHook('onRequest', async (request, reply) => setSecurityHeaders(request.url, reply.raw));
    app.addHook('onRequest', sendRequestId);
    // Before any route: GET /metrics, the request metrics and spans (docs/OPERATIONS.md).
    await registerObservability(app, config);
    // /v1 answers its errors in OpenAI's shape (its own scope below), not problem+json.
    const { allowedMethods } = registerProblemHandlers(app, { foreignPrefixes: ['/v1/', '/scim/'] });
    for (const s of SHARED_SCHEMAS) app.addSchema(s);
    app.decorateRequest('principal', null);

    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Atrium API',
          version: '1.0.0',
          description: 'Workspaces, models, chat and Plus entries. Rules that a schema cannot state: docs/API.md in the repository.',
        },
        // Relative: the document describes the server that serves it, wherever that listens.
        servers: [{ url: '/', description: 'the server that serves this document' }],
        tags: OPENAPI_TAGS,
        components: {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer', description: 'An API key (programs)' },
            cookie: {
              type: 'apiKey',
              in: 'cookie',
              name: 'atrium_session',
              description: 'The session cookie set by /api/v1/auth/login (browsers); unsafe methods need a same-origin Origin',
            },
          },
        },
        security: [{ bearer: [] }, { cookie: [] }],
      },
      transformObject: openapiTransform,
      refResolver: { buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    });
    registerDocs(app);
    await app.register(multipart, {
      limits: { fileSize: config.upload.maxFileBytes, files: config.upload.maxFiles },
    });

    // The routes are registered while the database opens (Fastify's route work is ~0.05 s of
    // start-up): they are handed services bound late (`late`), which exist before any request.
    let services: Services | null = null;
    const svc = <K extends Exclude<keyof Services, 'oidc'>>(k: K): Services[K] => late(() => services?.[k], k);
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
      try {
        if (!database) throw new Error('not open');
        await database.ping();
        return { status: 'ready' };
      } catch {
        return reply.code(503).send({ status: 'database unreachable' });
      }
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

    // One authentication hook for /api/v1 and /v1.
    const auth = authenticate(svc('teams'), svc('auth'), config.auth.publicUrl);
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
        api.addHook('onRequest', rejectNulInUrl);
        api.addHook('onRequest', auth);
        api.addHook('onRequest', requireJsonBody);
        api.addHook('preValidation', rejectNulInBody);
        await api.register(authRoutes, { auth: svc('auth'), publicUrl: config.auth.publicUrl });
        const oidc = config.auth.oidc ? late<OidcService>(() => services?.oidc ?? undefined, 'oidc') : null;
        await api.register(oidcRoutes, { oidc, auth: svc('auth'), publicUrl: config.auth.publicUrl });
        await api.register(teamRoutes, { teams: svc('teams'), publicUrl: config.auth.publicUrl });
        await api.register(modelRoutes, { models: svc('models') });
        await api.register(mcpRoutes, { mcp: svc('mcp') });
        await api.register(workspaceRoutes, { workspaces: svc('workspaces') });
        await api.register(promptLogRoutes, { logs: svc('promptLogs') });
        await api.register(chatRoutes, {
          chat: svc('chat'),
          turns: svc('turns'),
          limits: config.upload,
          heartbeatMs: config.sseHeartbeatMs,
          bodyLimitBytes: config.bodyLimitBytes,
        });
        await api.register(shareRoutes, { share: svc('share'), publicUrl: config.auth.publicUrl });
        await api.register(savedPromptRoutes, { prompts: svc('prompts') });
        await api.register(plusRoutes, { plus: svc('plus'), limits: config.upload });
        await api.register(evaluationRoutes, { evaluation: late(() => services?.plus.evaluation, 'plus') });
        await api.register(usageRoutes, { usage: svc('usage') });
        await api.register(embeddingRoutes, { embeddings: svc('embeddings') });
        await api.register(auditRoutes, { audit: svc('audit') });
        await api.register(retentionRoutes, { retention: svc('retention') });
        await api.register(scimTokenRoutes, { scim: svc('scim') });
      },
      { prefix: '/api/v1' },
    );
    // SCIM 2.0 for identity providers (docs/API.md, "SCIM provisioning"): its own token, body parser and error shape.
    await app.register(
      async (scim) => {
        scim.addHook('onRequest', rejectNulInUrl);
        await scim.register(scimRoutes, { scim: svc('scim') });
      },
      { prefix: '/scim/v2' },
    );
    // The web app at `/`: files of the build, and index.html for the app's own paths.
    registerWebApp(app, { webDir: config.webDir, shareExists: (token) => svc('share').exists(token) });

    // The OpenAI-compatible API (docs/API.md, "OpenAI-compatible API"): same authentication and
    // body checks, errors rendered as {error: {message, type, param, code}}.
    await app.register(
      async (v1) => {
        registerOpenAIErrorScope(v1, allowedMethods);
        v1.addHook('onRequest', rejectNulInUrl);
        v1.addHook('onRequest', auth);
        v1.addHook('onRequest', requireJsonBody);
        v1.addHook('preValidation', rejectNulInBody);
        await v1.register(openaiCompatRoutes, { compat: svc('compat'), heartbeatMs: config.sseHeartbeatMs, bodyLimitBytes: config.bodyLimitBytes });
      },
      { prefix: '/v1' },
    );

    // Everything above needs no database; from here on it does.
    database = await opening;
    const db = database;
    // Before anything else: a node whose key differs from the others' refuses to start.
    const secrets = await openInstanceSecrets(db.db, { secretKey: config.secretKey, dataDir: config.dataDir });
    for (const w of secrets.warnings) app.log.warn(w);
    services = createServices(db, config, secrets.box, (err, what) => app.log.warn({ err }, what));
    const built = services;
    const boot = await built.teams.bootstrap(config.adminApiKey, { email: config.auth.adminEmail, password: config.auth.adminPassword });
    let stopSweeper = async (): Promise<void> => {};
    let stopEmbedding = async (): Promise<void> => {};
    app.addHook('onClose', async () => {
      await stopSweeper();
      await stopEmbedding();
      await built.plus.close();
      await built.mcp.close();
      await built.imagePool.close();
      await db.close();
    });

    // `npm run cli -- backup` reaches this server here (embedded database on disk only).
    await serveAdminSocket(app, config.dataDir, db);
    await app.ready();
    // Finish prompt logs a crash left pending: now, then periodically (safe on every node).
    const stopLogSweeper = built.promptLogs.startSweeper((err) => app.log.warn({ err }, 'prompt log sweep failed'));
    // ... and give back the budget reservations of the turns it finished (PostgreSQL; safe on every node).
    const stopReservationSweeper = built.usage.startSweeper(config.promptLogSweepMs, (err) => app.log.warn({ err }, 'reservation sweep failed'));
    // Retention: now, then hourly (safe on every node: each team's purge locks its settings row, SKIP LOCKED).
    const stopRetention = built.retention.start((err) => app.log.warn({ err }, 'retention purge failed'));
    stopSweeper = async () => {
      await Promise.all([stopLogSweeper(), stopReservationSweeper(), stopRetention()]);
    };
    // Embed Plus files in the background (EMBEDDING_WORKER_INTERVAL_MS; safe on every node).
    stopEmbedding = built.embeddings.start();
    const warmUp = () => {
      validators.warm();
      serializers.warm();
      setImmediate(preloadTokenizer);
    };
    return {
      app,
      services: built,
      database: db,
      generatedAdminKey: boot.created && !config.adminApiKey ? (boot.apiKey ?? null) : null,
      adminInviteToken: boot.created ? (boot.inviteToken ?? null) : null,
      warmUp,
    };
  } catch (err) {
    // The database is closed whether it had opened before the failure or opens after it.
    if (database) await database.close();
    else
      void opening.then(
        (d) => d.close(),
        () => undefined,
      );
    throw err;
  }
}
