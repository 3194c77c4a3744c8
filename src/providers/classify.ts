/**
 * Provider failure classification: anything an SDK, fetch or an adapter's own parsing throws,
 * mapped to a {@link ProviderError} (errors.ts) by its HTTP status, the provider's error body, or
 * the transport failure underneath. The upstream body is read here for identifiers and numbers
 * only, never kept as text.
 *
 * The SDK error classes are recognised by their prototype chain's class names (duck typing), so
 * this module does not import the SDKs: they load lazily on the first call (see index.ts).
 */
import { ProviderError, providerAborted, providerBadResponse, providerTimeout } from './errors.js';

const SAFE_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

/** What an upstream error answer told us, read from its parsed body (never kept as text). */
export interface UpstreamErrorInfo {
  /** The most specific identifier: a string `code`, else the error `type` / Gemini `status`. */
  code?: string;
  /** Used only to recognise the failure and pull out numbers; never stored or returned. */
  message?: string;
  retryAfterSeconds?: number;
  contextLimit?: number;
  promptTokens?: number;
}

/** Error types too general to name a failure: a more specific code is preferred. */
const GENERIC_TYPES = new Set(['invalid_request_error', 'error', 'INVALID_ARGUMENT', 'api_error', 'server_error']);
const CONTEXT_CODES = new Set(['context_length_exceeded', 'exceed_context_size_error', 'string_above_max_length']);
const CONTEXT_TEXT =
  /context length|context window|context size|maximum context|prompt is too long|input token count|too many tokens|exceeds the (?:maximum|available)/i;
/** Codes that name an unknown model by themselves. */
const MODEL_NOT_FOUND_CODES = new Set(['model_not_found', 'DeploymentNotFound']);
/**
 * A 404 whose message names a model or deployment ("model: x" from Anthropic, "models/x is not
 * found" from Gemini, "The model `x` does not exist" from vLLM): generic codes such as
 * `not_found_error` / `NOT_FOUND` also come from a wrong URL path, and are not enough alone.
 */
const MODEL_404_TEXT = /\bmodels?\b|deployment/i;
/** A 400 that says the model is unknown (llama.cpp's router: "model 'x' not found"). */
const MODEL_400_TEXT = /\bmodel\b.{0,200}?\b(?:not found|does not exist|is not available|unknown)\b|\b(?:unknown|invalid) model\b/i;
/**
 * A refusal of the request's tools by a model or server that cannot take them: Ollama "… does not
 * support tools", llama.cpp "tools param requires --jinja flag", vLLM "\"auto\" tool choice requires
 * --enable-auto-tool-choice …", Gemini "Function calling is not enabled for models/…", OpenAI's
 * "'tools' is not supported with this model" (`unsupported_parameter`).
 */
const TOOLS_TEXT =
  /\b(?:does not|doesn't|do not|cannot) (?:support|use) (?:tools|tool[ _](?:calls?|calling|use)|function[ _]call(?:s|ing)?)\b|\b(?:tools?|tool[ _]choice|function[ _]call(?:s|ing)?)\b['"]?(?: param(?:eter)?)? (?:is |are )?(?:not supported|unsupported|not enabled|not available|requires?)\b/i;
const REFUSAL_CODES = new Set(['content_filter', 'content_policy_violation', 'ResponsibleAIPolicyViolation', 'PROHIBITED_CONTENT', 'SAFETY']);
const RATE_LIMIT_TYPES = new Set(['rate_limit_error', 'rate_limit_exceeded', 'RESOURCE_EXHAUSTED']);
const AUTH_TYPES = new Set(['authentication_error', 'permission_error', 'invalid_api_key', 'UNAUTHENTICATED', 'PERMISSION_DENIED']);

function positiveInt(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : undefined;
}

/** Retry-After (seconds or an HTTP date) or retry-after-ms, clamped to 1–3600 s. */
export function retryAfterFrom(headers: unknown): number | undefined {
  const get = (name: string): string | null => {
    if (headers && typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
    const v = headers && typeof headers === 'object' ? (headers as Record<string, unknown>)[name] : undefined;
    return typeof v === 'string' ? v : null;
  };
  let seconds: number | undefined;
  const ms = get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms)) seconds = Number(ms) / 1000;
  const ra = get('retry-after');
  if (seconds === undefined && ra) {
    if (/^\d+(\.\d+)?$/.test(ra.trim())) seconds = Number(ra.trim());
    else {
      const at = Date.parse(ra);
      if (Number.isFinite(at)) seconds = (at - Date.now()) / 1000;
    }
  }
  if (seconds === undefined || !Number.isFinite(seconds)) return undefined;
  return Math.min(3600, Math.max(1, Math.ceil(seconds)));
}

/** Token numbers in a context-length refusal (llama.cpp fields, or the wording of OpenAI, Anthropic, Gemini). */
function contextNumbers(body: Record<string, unknown> | undefined, message: string): { contextLimit?: number; promptTokens?: number } {
  let contextLimit = positiveInt(body?.n_ctx);
  let promptTokens = positiveInt(body?.n_prompt_tokens);
  const patterns: Array<[RegExp, 'limit' | 'prompt', number]> = [
    [/maximum context length is (\d+) tokens/i, 'limit', 1],
    [/resulted in (\d+) tokens/i, 'prompt', 1],
    [/(\d+) in the messages/i, 'prompt', 1],
    [/prompt is too long: (\d+) tokens > (\d+)/i, 'prompt', 1],
    [/prompt is too long: \d+ tokens > (\d+)/i, 'limit', 1],
    [/input token count \((\d+)\)/i, 'prompt', 1],
    [/maximum number of tokens allowed \((\d+)\)/i, 'limit', 1],
  ];
  for (const [re, what, group] of patterns) {
    const m = re.exec(message);
    const n = m ? positiveInt(m[group]) : undefined;
    if (n === undefined) continue;
    if (what === 'limit') contextLimit ??= n;
    else promptTokens ??= n;
  }
  return { ...(contextLimit !== undefined ? { contextLimit } : {}), ...(promptTokens !== undefined ? { promptTokens } : {}) };
}

/**
 * Read a provider's error body: OpenAI-style `{error: {code, type, message, …}}` (llama.cpp puts
 * a number in `code` and its identifier in `type`), Anthropic `{type: 'error', error: {type,
 * message}}`, Gemini `{error: {code, status, message}}`.
 */
export function upstreamInfo(body: unknown, headers?: unknown): UpstreamErrorInfo {
  let e = body && typeof body === 'object' ? (body as Record<string, unknown>) : typeof body === 'string' ? { message: body } : undefined;
  if (e && e.error && typeof e.error === 'object') e = e.error as Record<string, unknown>;
  // Ollama's native API: `{"error": "model \"x\" not found, try pulling it first"}`.
  else if (e && typeof e.error === 'string') e = { message: e.error };
  const ids = [e?.code, e?.type, e?.status].filter((v): v is string => typeof v === 'string' && SAFE_CODE.test(v));
  // A generic type is the fallback; a specific code wins.
  const code = ids.find((v) => !GENERIC_TYPES.has(v)) ?? ids[0];
  const message = typeof e?.message === 'string' ? e.message : '';
  const info: UpstreamErrorInfo = { ...(code ? { code } : {}), ...(message ? { message } : {}) };
  const retryAfterSeconds = retryAfterFrom(headers);
  if (retryAfterSeconds !== undefined) info.retryAfterSeconds = retryAfterSeconds;
  return { ...info, ...contextNumbers(e, message) };
}

function isContextLength(info: UpstreamErrorInfo): boolean {
  return (info.code !== undefined && CONTEXT_CODES.has(info.code)) || CONTEXT_TEXT.test(info.message ?? '');
}

function fromStatus(status: number, info: UpstreamErrorInfo = {}): ProviderError {
  const code = info.code;
  let e: ProviderError;
  if (status === 401 || status === 403) {
    e = new ProviderError('upstream_auth', `The model provider rejected the credentials (${status})`, status);
  } else if (status === 429) {
    e = new ProviderError('upstream_rate_limited', 'The model provider is rate limiting requests (429)', status, true);
  } else if ((status === 400 || status === 413 || status === 422) && isContextLength(info)) {
    e = new ProviderError('upstream_context_length', 'The prompt is longer than the model\u2019s context window', status);
  } else if ((status === 400 || status === 404 || status === 422 || status === 501) && TOOLS_TEXT.test(info.message ?? '')) {
    e = new ProviderError('upstream_tools_unsupported', 'The model (or its server) does not take tools', status);
  } else if (status === 404 && ((code !== undefined && MODEL_NOT_FOUND_CODES.has(code)) || MODEL_404_TEXT.test(info.message ?? ''))) {
    e = new ProviderError('upstream_model_not_found', 'The model provider does not know this model (404)', status);
  } else if ((status === 400 || status === 422) && ((code !== undefined && MODEL_NOT_FOUND_CODES.has(code)) || MODEL_400_TEXT.test(info.message ?? ''))) {
    e = new ProviderError('upstream_model_not_found', `The model provider does not know this model (${status})`, status);
  } else if (status >= 400 && status < 500 && code !== undefined && REFUSAL_CODES.has(code)) {
    e = new ProviderError('upstream_content_refused', 'The model provider refused the content of the request', status);
  } else if (status === 408 || status === 504) {
    e = new ProviderError('upstream_error', `The model provider answered ${status} (timeout)`, status, true);
  } else if (status >= 500) {
    e = new ProviderError('upstream_error', `The model provider answered ${status}`, status, true);
  } else if (status >= 300 && status < 400) {
    e = new ProviderError('upstream_error', `The model provider answered with a redirect (${status}), which is not followed`, status);
  } else {
    e = new ProviderError('upstream_error', `The model provider answered ${status}`, status);
  }
  return withInfo(e, info);
}

function withInfo(e: ProviderError, info: UpstreamErrorInfo): ProviderError {
  if (info.code !== undefined) e.upstreamCode = info.code;
  if (info.retryAfterSeconds !== undefined) e.retryAfterSeconds = info.retryAfterSeconds;
  if (e.kind === 'upstream_context_length') {
    if (info.contextLimit !== undefined) e.contextLimit = info.contextLimit;
    if (info.promptTokens !== undefined) e.promptTokens = info.promptTokens;
  }
  return e;
}

/** An error event inside a 200 stream (no HTTP status): classify by the provider's error type. */
function fromErrorType(info: UpstreamErrorInfo): ProviderError {
  const t = info.code ?? '';
  let e: ProviderError;
  if (RATE_LIMIT_TYPES.has(t)) {
    e = new ProviderError('upstream_rate_limited', 'The model provider is rate limiting requests', undefined, true);
  } else if (AUTH_TYPES.has(t)) {
    e = new ProviderError('upstream_auth', 'The model provider rejected the credentials');
  } else if (t === 'overloaded_error') {
    e = new ProviderError('upstream_error', 'The model provider is overloaded', undefined, true);
  } else if (isContextLength(info)) {
    e = new ProviderError('upstream_context_length', 'The prompt is longer than the model\u2019s context window');
  } else if (MODEL_NOT_FOUND_CODES.has(t) || (t === 'not_found_error' && MODEL_404_TEXT.test(info.message ?? ''))) {
    e = new ProviderError('upstream_model_not_found', 'The model provider does not know this model');
  } else if (REFUSAL_CODES.has(t)) {
    e = new ProviderError('upstream_content_refused', 'The model provider refused the content of the request');
  } else {
    e = new ProviderError('upstream_error', 'The model provider reported an error');
  }
  return withInfo(e, info);
}

const CONNECT_TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_ABORTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

function errorCodeOf(err: unknown): string | undefined {
  // Walk the cause chain (fetch wraps the socket error: TypeError('fetch failed', { cause })).
  let cur: unknown = err;
  for (let depth = 0; depth < 5 && cur && typeof cur === 'object'; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function nameOf(err: unknown): string {
  return err && typeof err === 'object' && typeof (err as { name?: unknown }).name === 'string' ? (err as { name: string }).name : '';
}

function messageOf(err: unknown): string {
  return err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string' ? (err as { message: string }).message : '';
}

function classifyTransport(err: unknown): ProviderError | null {
  const code = errorCodeOf(err);
  if (code && CONNECT_TIMEOUT_CODES.has(code)) return providerTimeout();
  const msg = messageOf(err);
  const causeMsg = messageOf((err as { cause?: unknown } | null)?.cause);
  if (code && CONNECTION_CODES.has(code)) {
    return new ProviderError('connection_failed', 'Could not reach the model provider, or the connection was interrupted', undefined, true);
  }
  if (msg === 'terminated' || causeMsg === 'other side closed' || /fetch failed|socket hang up|network/i.test(msg)) {
    return new ProviderError('connection_failed', 'Could not reach the model provider, or the connection was interrupted', undefined, true);
  }
  return null;
}

/** Class names along the prototype chain (the SDKs' error classes, recognised without importing them). */
function classNames(err: unknown): string[] {
  const names: string[] = [];
  for (let p = err && typeof err === 'object' ? Object.getPrototypeOf(err) : null; p && names.length < 8; p = Object.getPrototypeOf(p)) {
    const n = (p as { constructor?: { name?: unknown } }).constructor?.name;
    if (typeof n === 'string') names.push(n);
  }
  return names;
}

/** @google/genai's ApiError message is `got status: 404 Not Found. {"error": {...}}`: read the JSON part. */
function googleBody(message: string): unknown {
  const i = message.indexOf('{');
  if (i < 0) return undefined;
  try {
    return JSON.parse(message.slice(i));
  } catch {
    return undefined;
  }
}

/**
 * Map anything thrown by an SDK / fetch / our own validation to a {@link ProviderError}.
 * Covers: the APIError hierarchies of `openai` and `@anthropic-ai/sdk` (by status and body; user
 * abort; connection timeout; connection error), `@google/genai`'s `ApiError` (status and the body
 * in its message), DOM `AbortError` / `TimeoutError`, undici fetch failures (`TypeError: fetch
 * failed` with a socket `cause`, `TypeError: terminated` when a body stream breaks) and
 * `SyntaxError` from JSON parsing.
 */
export function classifyProviderError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const classes = classNames(err);

  // --- OpenAI / Anthropic (Stainless: APIUserAbortError, APIConnectionTimeoutError ⊂ APIConnectionError ⊂ APIError) ---
  if (classes.includes('APIUserAbortError')) return providerAborted();
  if (classes.includes('APIConnectionTimeoutError')) return providerTimeout();
  if (classes.includes('APIConnectionError')) {
    return (
      classifyTransport((err as { cause?: unknown }).cause) ?? new ProviderError('connection_failed', 'Could not reach the model provider', undefined, true)
    );
  }
  if (classes.includes('APIError')) {
    const e = err as { status?: unknown; error?: unknown; headers?: unknown; type?: unknown };
    const info = upstreamInfo(e.error, e.headers);
    // Anthropic stream errors carry their type on the error itself; a specific type wins over the body's.
    if (typeof e.type === 'string' && SAFE_CODE.test(e.type) && (info.code === undefined || !GENERIC_TYPES.has(e.type))) info.code = e.type;
    return typeof e.status === 'number' ? fromStatus(e.status, info) : fromErrorType(info);
  }

  // --- Google ---
  if (nameOf(err) === 'ApiError' && typeof (err as { status?: unknown }).status === 'number') {
    return fromStatus((err as { status: number }).status, upstreamInfo(googleBody(messageOf(err))));
  }

  // --- DOM / fetch ---
  const name = nameOf(err);
  if (name === 'AbortError') return providerAborted();
  if (name === 'TimeoutError') return providerTimeout();
  if (err instanceof SyntaxError) return providerBadResponse();

  const transport = classifyTransport(err);
  if (transport) return transport;

  const msg = messageOf(err);
  // @google/genai stream parser failures.
  if (/Incomplete JSON segment|Response body is empty|exception parsing stream chunk|response is undefined/.test(msg)) {
    return providerBadResponse();
  }
  // Any other object with a numeric HTTP status (duck typing: SDK copies loaded twice, etc.).
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && status >= 300 && status < 600) return fromStatus(status);

  return new ProviderError('upstream_error', 'The model provider request failed');
}

/** An HTTP refusal read without an SDK (the rerank adapter's fetch): by status, with the body's code and Retry-After only. */
export function classifyHttpStatus(status: number, body: unknown, headers?: unknown): ProviderError {
  return fromStatus(status, upstreamInfo(body, headers));
}
