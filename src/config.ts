import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { fileURLToPath } from 'node:url';
import type { SharedBuffersSetting } from './db/pglite-memory.js';
import { ConfigError } from './config-error.js';
import { OIDC_ENV, oidcConfig, type OidcConfig } from './config-oidc.js';

export { ConfigError } from './config-error.js';
export { parseTeamMap, type OidcConfig, type TeamRole } from './config-oidc.js';

/** The repository (or installed package) root: this file is src/config.ts or dist/config.js. */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The environment, parsed once at start-up into a frozen, typed Config.
 * Nothing else in the code base reads process.env.
 */
/** OTLP's encodings over HTTP (its gRPC transport is not offered: the loader refuses it by name). */
const OtlpProtocol = Type.Union([Type.Literal('http/protobuf'), Type.Literal('http/json')]);

const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  ADMIN_API_KEY: Type.Optional(Type.String({ minLength: 16 })),
  SECRET_KEY: Type.Optional(Type.String({ minLength: 16 })),
  PROVIDER_URL_POLICY: Type.Union([Type.Literal('allow-private'), Type.Literal('public-only')], {
    default: 'allow-private',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  UPLOAD_MAX_FILE_BYTES: Type.Integer({ minimum: 1024, default: 20 * 1_048_576 }),
  UPLOAD_MAX_REQUEST_BYTES: Type.Integer({ minimum: 1024, default: 50 * 1_048_576 }),
  UPLOAD_MAX_FILES: Type.Integer({ minimum: 1, default: 20 }),
  INGEST_WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  INGEST_WORKER_MAX_MEMORY_MB: Type.Integer({ minimum: 64, default: 512 }),
  INGEST_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 60_000 }),
  INGEST_MAX_PDF_PAGES: Type.Integer({ minimum: 1, default: 2000 }),
  INGEST_MAX_INFLATED_MEMBER_BYTES: Type.Integer({ minimum: 1024, default: 50 * 1_048_576 }),
  INGEST_MAX_INFLATED_TOTAL_BYTES: Type.Integer({ minimum: 1024, default: 100 * 1_048_576 }),
  INGEST_MAX_CHARS: Type.Integer({ minimum: 1, default: 25_000_000 }),
  INGEST_MAX_CHUNKS: Type.Integer({ minimum: 1, default: 20_000 }),
  INGEST_OCR_MAX_PAGES: Type.Integer({ minimum: 1, default: 50 }),
  INGEST_OCR_MAX_PIXELS: Type.Integer({ minimum: 10_000, default: 40_000_000 }),
  INGEST_OCR_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 600_000 }),
  PROVIDER_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 10_000 }),
  PROVIDER_TOTAL_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 300_000 }),
  PROVIDER_IDLE_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 60_000 }),
  PROMPT_LOG_MAX_ROWS: Type.Integer({ minimum: 1, default: 10_000 }),
  PROMPT_LOG_SWEEP_INTERVAL_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  SSE_HEARTBEAT_MS: Type.Integer({ minimum: 1000, default: 15_000 }),
  MCP_CALL_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 600_000, default: 30_000 }),
  SYSTEM_MODELS_FILE: Type.Optional(Type.String({ minLength: 1 })),
  PG_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  // Sign-in, sessions and the web app (docs/API.md, "Sign-in and sessions").
  ADMIN_EMAIL: Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$', default: 'admin@localhost' }),
  ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 8, maxLength: 1024 })),
  SESSION_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 31_536_000, default: 14 * 86_400 }),
  LOGIN_MAX_FAILURES_PER_EMAIL: Type.Integer({ minimum: 1, default: 10 }),
  LOGIN_MAX_FAILURES_PER_ADDRESS: Type.Integer({ minimum: 1, default: 100 }),
  LOGIN_FAILURE_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 900 }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#\\s]+/?$' })),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  PASSWORD_LOGIN: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  // OpenID Connect sign-in (docs/OPERATIONS.md, "Signing in with an identity provider"): on when the first three are set.
  ...OIDC_ENV,
  WEB_DIR: Type.Optional(Type.String({ minLength: 1 })),
  VECTOR_EXTENSION: Type.Union([Type.Literal('auto'), Type.Literal('on'), Type.Literal('off')], { default: 'auto' }),
  EMBEDDED_DB_THREAD: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  /** `auto` or a size from 1 to 1024 MB (`64MB`): see db/pglite-memory.ts. PGlite's WebAssembly memory is 2 GB in all; 3000MB fails its start. */
  EMBEDDED_SHARED_BUFFERS: Type.String({ pattern: '^(auto|([1-9][0-9]{0,2}|10[01][0-9]|102[0-4])MB)$', default: 'auto' }),
  /** In-memory lexical index of Plus entries (retrieval/lexical-index/): `auto` is on for the embedded database, off on a PostgreSQL server. */
  LEXICAL_INDEX: Type.Union([Type.Literal('auto'), Type.Literal('on'), Type.Literal('off')], { default: 'auto' }),
  LEXICAL_INDEX_MAX_CHUNKS: Type.Integer({ minimum: 0, maximum: 50_000_000, default: 300_000 }),
  EMBEDDING_WORKER_INTERVAL_MS: Type.Integer({ minimum: 0, default: 2_000 }),
  EMBEDDING_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 2048, default: 64 }),
  EMBEDDING_RETRY_BASE_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  EMBEDDING_RETRY_MAX_MS: Type.Integer({ minimum: 0, default: 3_600_000 }),
  EMBEDDING_CLAIM_MS: Type.Integer({ minimum: 1_000, default: 600_000 }),
  // Operations (docs/OPERATIONS.md): GET /metrics with this bearer token; OpenTelemetry traces when an OTLP endpoint is set.
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_HEADERS: Type.Optional(Type.String()),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: Type.Optional(Type.String()),
  OTEL_EXPORTER_OTLP_PROTOCOL: Type.Optional(OtlpProtocol),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Type.Optional(OtlpProtocol),
  OTEL_SERVICE_NAME: Type.String({ minLength: 1, default: 'atrium' }),
  OTEL_SDK_DISABLED: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
});

type Env = Static<typeof EnvSchema>;

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** null: the embedded PGlite database in dataDir; 'memory://' for tests */
  readonly databaseUrl: string | null;
  readonly adminApiKey: string | null;
  readonly secretKey: string | null;
  readonly providerUrlPolicy: 'allow-private' | 'public-only';
  readonly logLevel: string;
  readonly bodyLimitBytes: number;
  readonly upload: { readonly maxFileBytes: number; readonly maxRequestBytes: number; readonly maxFiles: number };
  /** Document ingestion: worker pool and per-file caps (see src/ingest/pool.ts, limits.ts). */
  readonly ingest: IngestConfig;
  readonly providerTimeouts: { readonly connectMs: number; readonly totalMs: number; readonly idleMs: number };
  readonly promptLogMaxRows: number;
  /** how often each node finishes prompt logs left pending by a crash */
  readonly promptLogSweepMs: number;
  /** interval of the `: ping` comment on an idle event stream */
  readonly sseHeartbeatMs: number;
  /** how long a chat turn waits for one MCP tool call (then the model is told it timed out) */
  readonly mcpCallTimeoutMs: number;
  readonly systemModelsFile: string | null;
  readonly pgPoolSize: number;
  readonly auth: AuthConfig;
  /** the folder of the built web app (index.html, assets/); served at `/` */
  readonly webDir: string;
  /**
   * 'off': never load pgvector (vector search on real[] in plain SQL); 'on': the embedded database
   * registers it at every start; 'auto': from the first start after vector search was first used
   * (db/files.ts, vectorMarker)
   */
  readonly vectorExtension: 'auto' | 'on' | 'off';
  /** the embedded database (in DATA_DIR) runs on its own thread (db/pglite-worker.ts; the default), so no statement holds the event loop; false: on the app's */
  readonly embeddedDbThread: boolean;
  /** the embedded database's page cache: 'auto' (sized to its data) or bytes (db/pglite-memory.ts) */
  readonly embeddedSharedBuffers: SharedBuffersSetting;
  /** the in-memory lexical index: `auto` (on for the embedded database), and the most chunks it holds in all */
  readonly lexicalIndex: { readonly mode: 'auto' | 'on' | 'off'; readonly maxChunks: number };
  readonly embeddings: EmbeddingConfig;
  /** GET /metrics answers with this bearer token; null: /metrics is 404 and prom-client is never loaded */
  readonly metricsToken: string | null;
  /** OpenTelemetry traces over OTLP/HTTP; null: off (the OTel packages are never loaded) */
  readonly tracing: TracingConfig | null;
}

export interface TracingConfig {
  /** where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces */
  readonly tracesUrl: string;
  /** OTEL_EXPORTER_OTLP_(TRACES_)HEADERS: `key=value,key2=value2` (values URL-decoded) */
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  /** OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL; OTLP's default is http/protobuf */
  readonly protocol: 'http/protobuf' | 'http/json';
}

export interface AuthConfig {
  /** the instance admin's email and, optionally, first password (used on an empty database only) */
  readonly adminEmail: string;
  readonly adminPassword: string | null;
  readonly sessionTtlSeconds: number;
  readonly maxFailuresPerEmail: number;
  readonly maxFailuresPerAddress: number;
  readonly failureWindowSeconds: number;
  /** the origin people reach the server at (`https://atrium.example.com`), without a trailing slash; null: the request's own */
  readonly publicUrl: string | null;
  /** Fastify's `trustProxy`: whether X-Forwarded-Proto/-For/-Host are believed (false, a hop count or the proxies' addresses) */
  readonly trustProxy: false | number | string[];
  /** PASSWORD_LOGIN: false refuses sign-in with a password, invites and password changes (API keys keep working) */
  readonly passwordLogin: boolean;
  /** OpenID Connect sign-in; null: off */
  readonly oidc: OidcConfig | null;
}

/** The background embedding of Plus files (src/modules/embeddings/worker.ts). */
export interface EmbeddingConfig {
  /** how often each node looks for files to embed; 0: this node never embeds */
  readonly workerIntervalMs: number;
  /** chunks per request to the provider */
  readonly batchSize: number;
  /** a failed file is retried after base × 2^(attempts−1), at most max */
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  /** how long a node's claim on a file lasts (a node that died releases it by expiry) */
  readonly claimMs: number;
}

export interface IngestConfig {
  readonly workers: number;
  readonly workerMaxMemoryMb: number;
  readonly timeoutMs: number;
  readonly maxPdfPages: number;
  readonly maxInflatedMemberBytes: number;
  readonly maxInflatedTotalBytes: number;
  readonly maxChars: number;
  readonly maxChunks: number;
  /** pages of one file read by OCR */
  readonly maxOcrPages: number;
  readonly maxOcrPixels: number;
  /** time a file that needs OCR may take, in place of timeoutMs */
  readonly ocrTimeoutMs: number;
}

/** Every environment variable the server reads (deployment files are checked against it). */
export const ENV_KEYS: readonly string[] = Object.freeze(Object.keys(EnvSchema.properties));

const INTEGER_KEYS = new Set(
  Object.entries(EnvSchema.properties)
    .filter(([, s]) => (s as { type?: string }).type === 'integer')
    .map(([k]) => k),
);

/** Parse an environment (process.env by default) into a Config; throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const v = env[key];
    if (v === undefined || v === '') continue;
    raw[key] = INTEGER_KEYS.has(key) && /^-?\d+$/.test(v.trim()) ? Number(v.trim()) : v;
  }
  const withDefaults = Value.Default(EnvSchema, raw);
  const errors = [...Value.Errors(EnvSchema, withDefaults)];
  if (errors.length > 0) {
    const lines = [...new Set(errors.map((e) => `${e.instancePath.replace(/^\//, '') || '(env)'}: ${e.message}`))];
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = withDefaults as Env;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL ?? null,
    adminApiKey: e.ADMIN_API_KEY ?? null,
    secretKey: e.SECRET_KEY ?? null,
    providerUrlPolicy: e.PROVIDER_URL_POLICY,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    upload: Object.freeze({
      maxFileBytes: e.UPLOAD_MAX_FILE_BYTES,
      maxRequestBytes: e.UPLOAD_MAX_REQUEST_BYTES,
      maxFiles: e.UPLOAD_MAX_FILES,
    }),
    ingest: Object.freeze({
      workers: e.INGEST_WORKERS,
      workerMaxMemoryMb: e.INGEST_WORKER_MAX_MEMORY_MB,
      timeoutMs: e.INGEST_TIMEOUT_MS,
      maxPdfPages: e.INGEST_MAX_PDF_PAGES,
      maxInflatedMemberBytes: e.INGEST_MAX_INFLATED_MEMBER_BYTES,
      maxInflatedTotalBytes: e.INGEST_MAX_INFLATED_TOTAL_BYTES,
      maxChars: e.INGEST_MAX_CHARS,
      maxChunks: e.INGEST_MAX_CHUNKS,
      maxOcrPages: e.INGEST_OCR_MAX_PAGES,
      maxOcrPixels: e.INGEST_OCR_MAX_PIXELS,
      ocrTimeoutMs: e.INGEST_OCR_TIMEOUT_MS,
    }),
    providerTimeouts: Object.freeze({
      connectMs: e.PROVIDER_CONNECT_TIMEOUT_MS,
      totalMs: e.PROVIDER_TOTAL_TIMEOUT_MS,
      idleMs: e.PROVIDER_IDLE_TIMEOUT_MS,
    }),
    promptLogMaxRows: e.PROMPT_LOG_MAX_ROWS,
    promptLogSweepMs: e.PROMPT_LOG_SWEEP_INTERVAL_MS,
    sseHeartbeatMs: e.SSE_HEARTBEAT_MS,
    mcpCallTimeoutMs: e.MCP_CALL_TIMEOUT_MS,
    systemModelsFile: e.SYSTEM_MODELS_FILE ?? null,
    pgPoolSize: e.PG_POOL_SIZE,
    auth: Object.freeze({
      adminEmail: e.ADMIN_EMAIL,
      adminPassword: e.ADMIN_PASSWORD ?? null,
      sessionTtlSeconds: e.SESSION_TTL_SECONDS,
      maxFailuresPerEmail: e.LOGIN_MAX_FAILURES_PER_EMAIL,
      maxFailuresPerAddress: e.LOGIN_MAX_FAILURES_PER_ADDRESS,
      failureWindowSeconds: e.LOGIN_FAILURE_WINDOW_SECONDS,
      publicUrl: e.PUBLIC_URL ? e.PUBLIC_URL.replace(/\/$/, '') : null,
      trustProxy: parseTrustProxy(e.TRUST_PROXY),
      passwordLogin: e.PASSWORD_LOGIN === 'on',
      oidc: oidcConfig(e),
    }),
    webDir: path.resolve(e.WEB_DIR ?? path.join(REPO_ROOT, 'dist', 'web')),
    vectorExtension: e.VECTOR_EXTENSION,
    embeddedDbThread: e.EMBEDDED_DB_THREAD === 'on',
    embeddedSharedBuffers: e.EMBEDDED_SHARED_BUFFERS === 'auto' ? 'auto' : Number.parseInt(e.EMBEDDED_SHARED_BUFFERS, 10) * 1024 * 1024,
    lexicalIndex: Object.freeze({ mode: e.LEXICAL_INDEX, maxChunks: e.LEXICAL_INDEX_MAX_CHUNKS }),
    embeddings: Object.freeze({
      workerIntervalMs: e.EMBEDDING_WORKER_INTERVAL_MS,
      batchSize: e.EMBEDDING_BATCH_SIZE,
      retryBaseMs: e.EMBEDDING_RETRY_BASE_MS,
      retryMaxMs: e.EMBEDDING_RETRY_MAX_MS,
      claimMs: e.EMBEDDING_CLAIM_MS,
    }),
    metricsToken: e.METRICS_TOKEN ?? null,
    tracing: tracingConfig(e),
  });
}

/** Tracing is on when an OTLP endpoint is set (and OTEL_SDK_DISABLED is not `true`). */
function tracingConfig(e: Env): TracingConfig | null {
  if (e.OTEL_SDK_DISABLED === 'true') return null;
  const tracesUrl =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : null);
  if (!tracesUrl) return null;
  const headers: Record<string, string> = {};
  for (const pair of `${e.OTEL_EXPORTER_OTLP_HEADERS ?? ''},${e.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? ''}`.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`Invalid configuration:\n  OTEL_EXPORTER_OTLP_HEADERS: the value of ${pair.slice(0, at).trim()} is not URL-encoded text`);
    }
  }
  const protocol = e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  return Object.freeze({ tracesUrl, headers: Object.freeze(headers), serviceName: e.OTEL_SERVICE_NAME, protocol });
}

/**
 * Where people reach this server, for links printed outside a request (the first start's invite,
 * the CLI): `PUBLIC_URL`, else HOST and PORT (a wildcard HOST printed as localhost).
 */
export function configuredOrigin(config: Config): string {
  if (config.auth.publicUrl) return config.auth.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

/**
 * `TRUST_PROXY`: unset or `false` → false; a hop count; else a comma-separated list of proxy
 * addresses/CIDRs. `true` is refused: it would believe the left-most `X-Forwarded-For`, which any
 * client writes itself, so the per-address sign-in limit would never hold.
 */
function parseTrustProxy(v: string | undefined): false | number | string[] {
  const t = v?.trim().toLowerCase();
  if (!t || t === 'false') return false;
  if (t === 'true') {
    throw new ConfigError(
      'Invalid configuration:\n  TRUST_PROXY: "true" would believe whatever address a client claims; set the number of proxies in front of Atrium (e.g. 1) or their addresses (e.g. 10.0.0.5,10.1.0.0/16)',
    );
  }
  if (/^\d+$/.test(t)) return Number(t);
  return t
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
}
