import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../errors.js';

/** Response headers the outer reply sets itself (the inner one's would be wrong or doubled). */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

/**
 * The API explorer at `/docs` (Swagger UI over `/openapi.json`), loaded on its first request.
 * `@fastify/swagger-ui` and the files it reads cost about 150 ms of start-up; a server that is
 * never browsed at /docs never pays it. The first request builds a small Fastify instance that
 * holds only the Swagger UI routes (over the application's finished document) and every
 * `/docs` request is answered by it through `inject`; what it does not know is the application's
 * own 404 problem.
 */
export function registerDocs(app: FastifyInstance): void {
  let inner: Promise<FastifyInstance> | null = null;
  const build = async (): Promise<FastifyInstance> => {
    const [{ default: Fastify }, { default: swagger }, { default: swaggerUi }] = await Promise.all([
      import('fastify'),
      import('@fastify/swagger'),
      import('@fastify/swagger-ui'),
    ]);
    const docs = Fastify({ logger: false });
    // The application's document, complete once it is ready (routes never change after that).
    await docs.register(swagger, { mode: 'static', specification: { document: app.swagger() as never } });
    await docs.register(swaggerUi, { routePrefix: '/docs' });
    await docs.ready();
    return docs;
  };
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    inner ??= build().catch((err: unknown) => {
      inner = null; // a failed load is retried by the next request
      throw err;
    });
    const docs = await inner;
    const res = await docs.inject({ method: request.method as 'GET' | 'HEAD', url: request.url, headers: request.headers });
    if (res.statusCode === 404) throw notFound('page of the API explorer');
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) void reply.header(name, value);
    }
    return reply.code(res.statusCode).send(res.rawPayload);
  };
  for (const url of ['/docs', '/docs/*']) app.route({ method: ['GET', 'HEAD'], url, schema: { hide: true }, handler });
}
