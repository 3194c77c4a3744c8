import Fastify, { LogController, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import type { TSchema } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import { registerObservability } from '../observability/http.js';
import { registerDocs } from './docs.js';
import { lazySerializers } from './lazy-serializers.js';
import { routerErrors } from './openai-errors.js';
import { openapiTransform, OPENAPI_TAGS } from './openapi.js';
import { registerProblemHandlers } from './problem.js';
import { requestId, sendRequestId } from './request-id.js';
import { setSecurityHeaders } from './security-headers.js';
import { validatorCompiler } from './validation.js';

export interface HttpServer {
  app: FastifyInstance;
  /** the methods each known path answers (the 405 table of http/problem.ts), for the /v1 scope's own errors */
  allowedMethods: (path: string) => string[];
  /** exports the spans still buffered when tracing is on (the app's close calls it) */
  tracing: { flush(): Promise<void> } | null;
  /** compile, in the background, the request validators and response serializers deferred past readiness */
  warm(): void;
}

/** Fastify's `trustProxy`; a hop count becomes the function Fastify would build from it (its types take no number). */
function trustProxyOption(v: false | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof v === 'number' ? (_address, hop) => hop < v : v;
}

/**
 * The Fastify instance with what every route shares and nothing needs the database for: the
 * hooks that run on every answer (security headers, request id, metrics and spans), problem+json
 * errors, the shared `$id` schemas, the OpenAPI document and multipart bodies. buildApp builds it
 * while the database opens; the routes come after (src/routing.ts).
 */
export async function createHttpServer(
  config: Config,
  opts: { logger?: boolean; serverFactory?: FastifyServerFactory; schemas: readonly TSchema[] },
): Promise<HttpServer> {
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
  const tracing = await registerObservability(app, config);
  // /v1 answers its errors in OpenAI's shape (its own scope, src/routing.ts), not problem+json.
  const { allowedMethods } = registerProblemHandlers(app, { foreignPrefixes: ['/v1/', '/scim/'] });
  for (const s of opts.schemas) app.addSchema(s);
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
  return {
    app,
    allowedMethods,
    tracing,
    warm() {
      validators.warm();
      serializers.warm();
    },
  };
}
