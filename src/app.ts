import Fastify, { LogController, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/client.js';
import { authenticate } from './http/auth.js';
import { lazySerializers } from './http/lazy-serializers.js';
import { frameworkErrors, registerProblemHandlers } from './http/problem.js';
import { ProblemSchema } from './http/schemas.js';
import { rejectNulInBody, rejectNulInUrl } from './http/text-guard.js';
import { openapiTransform, OPENAPI_TAGS } from './http/openapi.js';
import { registerWebApp } from './http/web-app.js';
import { requireJsonBody, validatorCompiler } from './http/validation.js';
import { preloadTokenizer } from './ingest/tokens.js';
import { chatRoutes } from './modules/chat/routes.js';
import { ChatAnswer, ChatStreamEvent, ChatThread, ChatThreadFull } from './modules/chat/schema.js';
import { modelRoutes } from './modules/models/routes.js';
import { plusRoutes } from './modules/plus/routes.js';
import { Plus, PlusSummary } from './modules/plus/schema.js';
import { promptLogRoutes } from './modules/prompt-logs/routes.js';
import { PromptLog } from './modules/prompt-logs/schema.js';
import { Model } from './modules/models/schema.js';
import { authRoutes } from './modules/teams/auth-routes.js';
import { teamRoutes } from './modules/teams/routes.js';
import { ApiKey, Team, User } from './modules/teams/schema.js';
import { workspaceRoutes } from './modules/workspaces/routes.js';
import { Workspace, WorkspaceModel } from './modules/workspaces/schema.js';
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
  /** Start, in the background, the work deferred past readiness (response serializers, tokenizer). */
  warmUp(): void;
}

export const SHARED_SCHEMAS = [ProblemSchema, User, Team, ApiKey, Model, WorkspaceModel, Workspace, ChatAnswer, ChatStreamEvent, ChatThread, ChatThreadFull, PromptLog, Plus, PlusSummary];

/** Fastify's `trustProxy`; a hop count becomes the function Fastify would build from it (its types take no number). */
function trustProxyOption(v: boolean | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof v === 'number' ? (_address, hop) => hop < v : v;
}

/**
 * Build the whole application: database (migrated), services, HTTP routes. Production (main.ts)
 * and the tests call this same function, so they run the same validators and plugins.
 */
export async function buildApp(
  config: Config,
  opts: { logger?: boolean; serverFactory?: FastifyServerFactory; database?: Database } = {},
): Promise<App> {
  // main.ts opens the database while this module's imports load, and hands it over (owned from here on).
  const database = opts.database ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.pgPoolSize }));
  try {
    // Before anything else: a node whose key differs from the others' refuses to start.
    const secrets = await openInstanceSecrets(database.db, { secretKey: config.secretKey, dataDir: config.dataDir });
    const services = createServices(database, config, secrets.box);
    const boot = await services.teams.bootstrap(config.adminApiKey, { email: config.auth.adminEmail, password: config.auth.adminPassword });
    const serializers = lazySerializers();
    const app = Fastify({
      logger:
        opts.logger === false
          ? false
          : {
              level: config.logLevel,
              redact: { paths: ['req.headers.authorization', 'req.headers["api-key"]', 'req.headers["x-api-key"]'], censor: '[redacted]' },
            },
      bodyLimit: config.bodyLimitBytes,
      // Per-request lines only at debug/trace: at info they would cost more than the gateway itself.
      logController: new LogController({ disableRequestLogging: config.logLevel !== 'debug' && config.logLevel !== 'trace' }),
      return503OnClosing: true,
      frameworkErrors,
      ...(opts.serverFactory ? { serverFactory: opts.serverFactory } : {}),
      forceCloseConnections: 'idle',
      // Whether X-Forwarded-Proto/-For/-Host are believed: the Secure cookie flag and the login throttle's client address depend on it.
      trustProxy: trustProxyOption(config.auth.trustProxy),
      schemaController: { compilersFactory: { buildSerializer: serializers.buildSerializer } },
    }).withTypeProvider<TypeBoxTypeProvider>();

    app.setValidatorCompiler(validatorCompiler());
    registerProblemHandlers(app);
    for (const s of SHARED_SCHEMAS) app.addSchema(s);
    app.decorateRequest('principal', null);
    for (const w of secrets.warnings) app.log.warn(w);
    let stopSweeper = async (): Promise<void> => {};
    app.addHook('onClose', async () => {
      await stopSweeper();
      await services.plus.close();
      await database.close();
    });

    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Atrium API', version: '1.0.0', description: 'Workspaces, models, chat and Plus entries. Rules that a schema cannot state: docs/API.md in the repository.' },
        // Relative: the document describes the server that serves it, wherever that listens.
        servers: [{ url: '/', description: 'the server that serves this document' }],
        tags: OPENAPI_TAGS,
        components: {
          securitySchemes: {
            bearer: { type: 'http', scheme: 'bearer', description: 'An API key (programs)' },
            cookie: { type: 'apiKey', in: 'cookie', name: 'atrium_session', description: 'The session cookie set by /api/v1/auth/login (browsers); unsafe methods need a same-origin Origin' },
          },
        },
        security: [{ bearer: [] }, { cookie: [] }],
      },
      transformObject: openapiTransform,
      refResolver: { buildLocalReference: (json, _base, _frag, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
    await app.register(multipart, {
      limits: { fileSize: config.upload.maxFileBytes, files: config.upload.maxFiles },
    });

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

    await app.register(
      async (api) => {
        api.addHook('onRequest', rejectNulInUrl);
        api.addHook('onRequest', authenticate(services.teams, services.auth, config.auth.publicUrl));
        api.addHook('onRequest', requireJsonBody);
        api.addHook('preValidation', rejectNulInBody);
        await api.register(authRoutes, { auth: services.auth, publicUrl: config.auth.publicUrl });
        await api.register(teamRoutes, { teams: services.teams, publicUrl: config.auth.publicUrl });
        await api.register(modelRoutes, { models: services.models });
        await api.register(workspaceRoutes, { workspaces: services.workspaces });
        await api.register(promptLogRoutes, { logs: services.promptLogs });
        await api.register(chatRoutes, { chat: services.chat, turns: services.turns, limits: config.upload, heartbeatMs: config.sseHeartbeatMs });
        await api.register(plusRoutes, { plus: services.plus, limits: config.upload });
      },
      { prefix: '/api/v1' },
    );
    // The web app at `/`: files of the build, and index.html for the app's own paths.
    await registerWebApp(app, { webDir: config.webDir });

    await app.ready();
    // Finish prompt logs a crash left pending: now, then periodically (safe on every node).
    stopSweeper = services.promptLogs.startSweeper((err) => app.log.warn({ err }, 'prompt log sweep failed'));
    const warmUp = () => {
      serializers.warm();
      setImmediate(preloadTokenizer);
    };
    return {
      app,
      services,
      database,
      generatedAdminKey: boot.created && !config.adminApiKey ? (boot.apiKey ?? null) : null,
      adminInviteToken: boot.created ? (boot.inviteToken ?? null) : null,
      warmUp,
    };
  } catch (err) {
    await database.close();
    throw err;
  }
}
