/**
 * The Prometheus metrics of this node (docs/OPERATIONS.md lists them), in prom-client's registry,
 * fed by hooks.ts. Loaded only when METRICS_TOKEN is set. Each node has its own registry: with
 * several nodes, Prometheus scrapes each of them and sums.
 *
 * Labels carry bounded values only: route patterns (never raw URLs), methods, status codes,
 * outcomes, token kinds and provider base-URL origins. Nothing a user typed and no id.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { installObserver } from './hooks.js';

const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const PROVIDER_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 80, 160, 300];
const TTFT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 60];
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface Metrics {
  readonly registry: Registry;
  /** the exposition text and its content type */
  render(): Promise<{ contentType: string; body: string }>;
}

let instance: Metrics | null = null;

/** The process's metrics, created (and wired to hooks.ts) on first call. */
export function startMetrics(): Metrics {
  if (instance) return instance;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const httpRequests = new Counter({
    name: 'atrium_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'atrium_http_request_duration_seconds',
    help: 'Time from receiving a request to sending the last byte of its answer (a stream: its whole length)',
    labelNames: ['method', 'route'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });
  const turns = new Counter({
    name: 'atrium_chat_turns_total',
    help: 'Chat turns finished, by outcome (ok, error, interrupted); refused turns are counted by atrium_budget_refusals_total',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'atrium_tokens_total',
    help: 'Tokens billed for chat turns, by kind (prompt, completion)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const credits = new Counter({ name: 'atrium_credits_total', help: 'Credits charged for chat turns', registers: [registry] });
  const refusals = new Counter({
    name: 'atrium_budget_refusals_total',
    help: 'Calls refused by a budget or a rate limit (answered 429)',
    registers: [registry],
  });
  const ingested = new Counter({
    name: 'atrium_ingest_files_total',
    help: 'Uploaded files ingested, by outcome (ok, unsupported_type, corrupt, too_large, failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const providerDuration = new Histogram({
    name: 'atrium_provider_request_duration_seconds',
    help: "Model provider calls, whole duration (a stream: until its end), by the configured base URL's origin",
    labelNames: ['api_base'] as const,
    buckets: PROVIDER_BUCKETS,
    registers: [registry],
  });
  const ttft = new Histogram({
    name: 'atrium_time_to_first_token_seconds',
    help: 'Streamed provider calls: time from the call to the first token',
    labelNames: ['api_base'] as const,
    buckets: TTFT_BUCKETS,
    registers: [registry],
  });
  // The p99 of the event loop's delay since the previous scrape (Node's own sampler, 20 ms resolution).
  const lag = monitorEventLoopDelay({ resolution: 20 });
  lag.enable();
  new Gauge({
    name: 'atrium_event_loop_lag_seconds',
    help: "The event loop's delay, 99th percentile over the time since the previous scrape",
    registers: [registry],
    collect() {
      this.set(lag.count > 0 ? lag.percentile(99) / 1e9 : 0);
      lag.reset();
    },
  });

  installObserver({
    httpRequest(method, route, status, seconds) {
      const m = METHODS.has(method) ? method : 'OTHER';
      httpRequests.inc({ method: m, route, status: String(status) });
      httpDuration.observe({ method: m, route }, seconds);
    },
    chatTurn(turn) {
      turns.inc({ outcome: turn.status });
      tokens.inc({ kind: 'prompt' }, turn.promptTokens);
      tokens.inc({ kind: 'completion' }, turn.completionTokens);
      if (Number.isFinite(turn.credits) && turn.credits > 0) credits.inc(turn.credits);
    },
    budgetRefusal() {
      refusals.inc();
    },
    ingestFile(outcome) {
      ingested.inc({ outcome });
    },
    providerCall(info) {
      const started = performance.now();
      return {
        firstToken() {
          if (info.streaming) ttft.observe({ api_base: info.apiBase }, (performance.now() - started) / 1000);
        },
        end() {
          providerDuration.observe({ api_base: info.apiBase }, (performance.now() - started) / 1000);
        },
      };
    },
  });
  // Series that exist from the start, so that rate() has a zero to start from.
  for (const outcome of ['ok', 'error', 'interrupted']) turns.inc({ outcome }, 0);
  for (const kind of ['prompt', 'completion']) tokens.inc({ kind }, 0);

  instance = {
    registry,
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
  return instance;
}
