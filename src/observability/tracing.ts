/**
 * OpenTelemetry traces over OTLP/HTTP (protobuf, OTLP's default, or JSON), loaded by dynamic import only when an endpoint is
 * configured (Config.tracing): one span per HTTP request (@fastify/otel), a child per provider
 * call with the GenAI semantic conventions, one per database statement (db-statements.ts) and
 * one per file ingestion. The SDK's own OTEL_* variables (OTEL_TRACES_SAMPLER, OTEL_BSP_*,
 * OTEL_RESOURCE_ATTRIBUTES…) apply as the SDK documents them.
 */
import { context, SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { FastifyPluginCallback } from 'fastify';
import type { TracingConfig } from '../config.js';
import { installObserver, installStatementTracer } from './hooks.js';
import { statementSpans } from './db-statements.js';

export interface Tracing {
  readonly tracer: Tracer;
  /** the Fastify plugin that opens a span per request; registered before the routes */
  plugin(): FastifyPluginCallback;
  /** export what is buffered (tests, shutdown) */
  flush(): Promise<void>;
}

let instance: Tracing | null = null;

/** Start tracing for the process (once; later calls return the same instance). */
export function startTracing(cfg: TracingConfig): Tracing {
  if (instance) return instance;
  const Exporter = cfg.protocol === 'http/json' ? JsonExporter : ProtobufExporter;
  const exporter = new Exporter({ url: cfg.tracesUrl, headers: { ...cfg.headers } });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': cfg.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // The global provider, with the AsyncLocalStorage context manager: a provider call's span finds its request's.
  provider.register();
  const tracer = provider.getTracer('atrium');
  const fastifyOtel = new FastifyOtelInstrumentation({
    // One span per request: no span per lifecycle hook or per handler.
    instrumentHooks: false,
    instrumentHandler: false,
    ignorePaths: (r) => r.url === '/healthz' || r.url === '/readyz' || r.url === '/metrics',
    requestHook: (span, request) => {
      const route = request.routeOptions.url;
      if (route) span.updateName(`${request.method} ${route}`);
      // The query string may hold what a user searched for: the path only.
      span.setAttribute('url.path', request.url.split('?')[0] ?? '');
    },
  });
  fastifyOtel.setTracerProvider(provider);

  installObserver({
    providerCall(info) {
      const span = tracer.startSpan(
        `${info.operation} ${info.model}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'gen_ai.system': info.system,
            'gen_ai.provider.name': info.system,
            'gen_ai.operation.name': info.operation,
            'gen_ai.request.model': info.model,
            'server.address': hostOf(info.apiBase),
            'atrium.stream': info.streaming,
          },
        },
        context.active(),
      );
      return {
        firstToken() {
          span.addEvent('gen_ai.first_token');
        },
        end({ usage, error }) {
          if (usage) {
            span.setAttribute('gen_ai.usage.input_tokens', usage.promptTokens);
            span.setAttribute('gen_ai.usage.output_tokens', usage.completionTokens);
          }
          if (error) failed(span, error);
          span.end();
        },
      };
    },
    ingestion({ bytes }) {
      const span = tracer.startSpan('ingest file', { attributes: { 'atrium.ingest.bytes': bytes } }, context.active());
      return (outcome) => {
        span.setAttribute('atrium.ingest.outcome', outcome);
        if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      };
    },
  });
  installStatementTracer(statementSpans(tracer));

  instance = {
    tracer,
    plugin: () => fastifyOtel.plugin() as unknown as FastifyPluginCallback,
    flush: () => provider.forceFlush(),
  };
  return instance;
}

/** The span failed: its status, and the error's class (`error.type`), never its message (it may quote upstream text). */
function failed(span: Span, error: unknown): void {
  const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : null;
  span.setAttribute('error.type', code ?? (error instanceof Error ? error.name : 'error'));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

function hostOf(origin: string): string {
  try {
    return new URL(origin).hostname;
  } catch {
    return origin;
  }
}
