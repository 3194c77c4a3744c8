/**
 * Provider failure classification.
 *
 * Every error that leaves an adapter is a {@link ProviderError}. Its `message` is a short,
 * generic description written here — NEVER the upstream error body or the SDK's message,
 * which embed the upstream body (and may contain keys, prompts or other secrets).
 */
import {
  APIError as OpenAIAPIError,
  APIUserAbortError as OpenAIUserAbortError,
  APIConnectionError as OpenAIConnectionError,
  APIConnectionTimeoutError as OpenAIConnectionTimeoutError,
} from 'openai';
import {
  APIError as AnthropicAPIError,
  APIUserAbortError as AnthropicUserAbortError,
  APIConnectionError as AnthropicConnectionError,
  APIConnectionTimeoutError as AnthropicConnectionTimeoutError,
} from '@anthropic-ai/sdk';
import { ApiError as GoogleApiError } from '@google/genai';

export type ProviderErrorKind =
  | 'upstream_error'
  | 'upstream_auth'
  | 'upstream_rate_limited'
  | 'timeout'
  | 'aborted'
  | 'bad_response'
  | 'connection_failed';

/** Stable, client-facing error code per kind. */
export const PROVIDER_ERROR_CODES = {
  upstream_error: 'provider_error',
  upstream_auth: 'provider_auth_failed',
  upstream_rate_limited: 'provider_rate_limited',
  timeout: 'provider_timeout',
  aborted: 'provider_aborted',
  bad_response: 'provider_bad_response',
  connection_failed: 'provider_unreachable',
} as const satisfies Record<ProviderErrorKind, string>;

export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[ProviderErrorKind];

export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  /**
   * Short machine-readable code reported by the provider (e.g. `invalid_api_key`,
   * `context_length_exceeded`, `rate_limit_error`), only kept when it matches
   * /^[A-Za-z0-9_.-]{1,64}$/. Never free text.
   */
  upstreamCode?: string;

  constructor(
    public kind: ProviderErrorKind,
    message: string,
    public upstreamStatus?: number,
    public retryable = false,
  ) {
    super(message);
  }

  get code(): ProviderErrorCode {
    return PROVIDER_ERROR_CODES[this.kind];
  }

  toJSON(): { kind: ProviderErrorKind; code: ProviderErrorCode; message: string; upstreamStatus?: number; retryable: boolean } {
    return {
      kind: this.kind,
      code: this.code,
      message: this.message,
      ...(this.upstreamStatus !== undefined ? { upstreamStatus: this.upstreamStatus } : {}),
      retryable: this.retryable,
    };
  }
}

/** HTTP status Atrium should answer with: 504 for a timeout, 502 for everything else upstream. */
export function httpStatusFor(e: ProviderError): number {
  return e.kind === 'timeout' ? 504 : 502;
}

export function providerErrorCode(e: ProviderError): ProviderErrorCode {
  return e.code;
}

// --- constructors used by the adapters -------------------------------------------------

export const providerTimeout = (): ProviderError =>
  new ProviderError('timeout', 'The model provider did not answer in time', undefined, true);

export const providerAborted = (): ProviderError =>
  new ProviderError('aborted', 'The request to the model provider was cancelled');

export const providerBadResponse = (what = 'a response that could not be understood'): ProviderError =>
  new ProviderError('bad_response', `The model provider sent ${what}`);

// --- classification --------------------------------------------------------------------

const SAFE_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

function fromStatus(status: number, upstreamCode?: unknown): ProviderError {
  let e: ProviderError;
  if (status === 401 || status === 403) {
    e = new ProviderError('upstream_auth', `The model provider rejected the credentials (${status})`, status);
  } else if (status === 429) {
    e = new ProviderError('upstream_rate_limited', 'The model provider is rate limiting requests (429)', status, true);
  } else if (status === 408 || status === 504) {
    e = new ProviderError('upstream_error', `The model provider answered ${status} (timeout)`, status, true);
  } else if (status >= 500) {
    e = new ProviderError('upstream_error', `The model provider answered ${status}`, status, true);
  } else if (status >= 300 && status < 400) {
    e = new ProviderError('upstream_error', `The model provider answered with a redirect (${status}), which is not followed`, status);
  } else {
    e = new ProviderError('upstream_error', `The model provider answered ${status}`, status);
  }
  if (typeof upstreamCode === 'string' && SAFE_CODE.test(upstreamCode)) e.upstreamCode = upstreamCode;
  return e;
}

/** An error event inside a 200 stream (no HTTP status): classify by the provider's error type. */
function fromErrorType(type: unknown): ProviderError {
  const t = typeof type === 'string' ? type : '';
  let e: ProviderError;
  if (t === 'rate_limit_error' || t === 'rate_limit_exceeded' || t === 'RESOURCE_EXHAUSTED') {
    e = new ProviderError('upstream_rate_limited', 'The model provider is rate limiting requests', undefined, true);
  } else if (t === 'authentication_error' || t === 'permission_error' || t === 'invalid_api_key') {
    e = new ProviderError('upstream_auth', 'The model provider rejected the credentials');
  } else if (t === 'overloaded_error') {
    e = new ProviderError('upstream_error', 'The model provider is overloaded', undefined, true);
  } else {
    e = new ProviderError('upstream_error', 'The model provider reported an error');
  }
  if (SAFE_CODE.test(t)) e.upstreamCode = t;
  return e;
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
  return err && typeof err === 'object' && typeof (err as { name?: unknown }).name === 'string'
    ? (err as { name: string }).name
    : '';
}

function messageOf(err: unknown): string {
  return err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string'
    ? (err as { message: string }).message
    : '';
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

/**
 * Map anything thrown by an SDK / fetch / our own validation to a {@link ProviderError}.
 * Covers: the APIError hierarchies of `openai` and `@anthropic-ai/sdk` (by status; user abort;
 * connection timeout; connection error), `@google/genai`'s `ApiError` (status), DOM
 * `AbortError` / `TimeoutError`, undici fetch failures (`TypeError: fetch failed` with a socket
 * `cause`, `TypeError: terminated` when a body stream breaks) and `SyntaxError` from JSON parsing.
 */
export function classifyProviderError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;

  // --- OpenAI / Anthropic (Stainless) ---
  if (err instanceof OpenAIUserAbortError || err instanceof AnthropicUserAbortError) return providerAborted();
  if (err instanceof OpenAIConnectionTimeoutError || err instanceof AnthropicConnectionTimeoutError) return providerTimeout();
  if (err instanceof OpenAIConnectionError || err instanceof AnthropicConnectionError) {
    return classifyTransport((err as { cause?: unknown }).cause) ??
      new ProviderError('connection_failed', 'Could not reach the model provider', undefined, true);
  }
  if (err instanceof OpenAIAPIError) {
    if (typeof err.status === 'number') return fromStatus(err.status, err.code ?? err.type);
    return fromErrorType(err.code ?? err.type);
  }
  if (err instanceof AnthropicAPIError) {
    if (typeof err.status === 'number') return fromStatus(err.status, err.errorCode ?? err.type);
    return fromErrorType(err.type);
  }

  // --- Google ---
  if (err instanceof GoogleApiError || (nameOf(err) === 'ApiError' && typeof (err as { status?: unknown }).status === 'number')) {
    return fromStatus((err as { status: number }).status);
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
