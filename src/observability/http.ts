/**
 * The HTTP side of telemetry: GET /metrics, the per-request metrics hook and the per-request
 * span. prom-client and the OpenTelemetry packages are imported only when configured, so with
 * neither METRICS_TOKEN nor an OTLP endpoint nothing more is loaded and no hook is added.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Config, TracingConfig } from '../config.js';
import { problem, sendProblem } from '../http/problem.js';
import { observe } from './hooks.js';

/** Start tracing (once per process) when configured: before the database opens, so its statements are traced. */
export async function startTracingIfConfigured(tracing: TracingConfig | null): Promise<void> {
  if (tracing) (await import('./tracing.js')).startTracing(tracing);
}

/**
 * Register before any route: the request span, the request metrics and GET /metrics. Returns,
 * when tracing is on, what exports the spans still buffered (the app calls it when it closes;
 * the tracer itself is the process's and outlives the app).
 */
export async function registerObservability(
  app: FastifyInstance,
  config: Pick<Config, 'metricsToken' | 'tracing'>,
): Promise<{ flush(): Promise<void> } | null> {
  let tracing: { flush(): Promise<void> } | null = null;
  if (config.tracing) {
    const { startTracing } = await import('./tracing.js');
    const started = startTracing(config.tracing);
    await app.register(started.plugin());
    tracing = started;
  }
  const token = config.metricsToken;
  if (!token) {
    app.get('/metrics', { schema: { hide: true } }, async (_req, reply) =>
      sendProblem(reply, problem(404, 'not_found', 'Metrics are off: set METRICS_TOKEN to serve them')),
    );
    return tracing;
  }
  const { startMetrics } = await import('./metrics.js');
  const metrics = startMetrics();
  app.addHook('onResponse', async (request, reply) => {
    // The route's pattern (`/api/v1/workspaces/:workspaceId`), never the URL: bounded, and no ids.
    observe.httpRequest(request.method, request.routeOptions.url ?? '(unmatched)', reply.statusCode, reply.elapsedTime / 1000);
  });
  const expected = digest(token);
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    const m = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(digest(m[1]!), expected)) {
      return sendProblem(reply.header('www-authenticate', 'Bearer'), problem(401, 'unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>'));
    }
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).header('cache-control', 'no-store').send(body);
  });
  return tracing;
}

/** Equal-length digests, so the comparison takes the same time whatever was sent. */
function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
