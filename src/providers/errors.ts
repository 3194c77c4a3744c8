/**
 * What a provider's failure is to Atrium: the {@link ProviderError} every adapter throws, its
 * stable client-facing codes, the HTTP status Atrium answers with, the prompt log's wording, and the
 * constructors the adapters use. How an SDK's or fetch's error becomes one is classify.ts.
 *
 * A ProviderError's `message` is a short, generic description written here or in classify.ts —
 * NEVER the upstream error body or the SDK's message, which embed the upstream body (and may
 * contain keys, prompts or other secrets). What is kept from the upstream answer: its status, a
 * short identifier-like error code (`upstreamCode`), Retry-After, and numbers (token counts) from a
 * context-length refusal.
 */

export type ProviderErrorKind =
  | 'upstream_error'
  | 'upstream_auth'
  | 'upstream_rate_limited'
  | 'upstream_model_not_found'
  | 'upstream_context_length'
  | 'upstream_content_refused'
  | 'upstream_tools_unsupported'
  | 'timeout'
  | 'aborted'
  | 'bad_response'
  | 'connection_failed';

/** Stable, client-facing error code per kind (table in src/providers/README.md). */
export const PROVIDER_ERROR_CODES = {
  upstream_error: 'provider_error',
  upstream_auth: 'provider_auth_failed',
  upstream_rate_limited: 'provider_rate_limited',
  upstream_model_not_found: 'provider_model_not_found',
  upstream_context_length: 'provider_context_length_exceeded',
  upstream_content_refused: 'provider_content_refused',
  upstream_tools_unsupported: 'provider_tools_unsupported',
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
   * `context_length_exceeded`, `exceed_context_size_error`, `NOT_FOUND`), only kept when it
   * matches /^[A-Za-z0-9_.-]{1,64}$/. Never free text.
   */
  upstreamCode?: string;
  /** Seconds the provider asked us to wait (its Retry-After / retry-after-ms), 1–3600. */
  retryAfterSeconds?: number;
  /** Context-length refusals: the window the provider enforces, when it said so. */
  contextLimit?: number;
  /** Context-length refusals: the prompt size the provider counted, when it said so. */
  promptTokens?: number;

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

  toJSON(): { kind: ProviderErrorKind; code: ProviderErrorCode; message: string; upstreamStatus?: number; upstreamCode?: string; retryable: boolean } {
    return {
      kind: this.kind,
      code: this.code,
      message: this.message,
      ...(this.upstreamStatus !== undefined ? { upstreamStatus: this.upstreamStatus } : {}),
      ...(this.upstreamCode !== undefined ? { upstreamCode: this.upstreamCode } : {}),
      retryable: this.retryable,
    };
  }
}

/**
 * HTTP status Atrium answers with (the same as `upstreamError` in src/errors.ts): 504 for a
 * timeout, 429 when the provider rate-limits us (with its Retry-After passed on), 400 for a prompt
 * longer than the window, 404 for a model the provider does not know, 502 for everything else.
 */
export function httpStatusFor(e: ProviderError): number {
  if (e.kind === 'timeout') return 504;
  if (e.kind === 'upstream_rate_limited') return 429;
  if (e.kind === 'upstream_context_length' || e.kind === 'upstream_tools_unsupported') return 400;
  if (e.kind === 'upstream_model_not_found') return 404;
  return 502;
}

/**
 * A refusal that the same request cannot change, however often it is sent: the key, the content,
 * the model, the prompt's length, any other 4xx. Clients are told not to retry it.
 */
export function isFinalRefusal(e: { kind: string; upstreamStatus?: number | undefined }): boolean {
  if (
    e.kind === 'upstream_auth' ||
    e.kind === 'upstream_content_refused' ||
    e.kind === 'upstream_model_not_found' ||
    e.kind === 'upstream_context_length' ||
    e.kind === 'upstream_tools_unsupported'
  )
    return true;
  const s = e.upstreamStatus;
  return e.kind === 'upstream_error' && s !== undefined && s >= 400 && s < 500 && s !== 408 && s !== 409;
}

/**
 * The prompt log's `error` text: our code and message, then the upstream status and code in
 * brackets — `provider_context_length_exceeded: … [upstream 400 exceed_context_size_error]`.
 * {@link withoutUpstreamDetail} removes the bracket for readers who are not team owners/admins.
 */
export function describeForLog(e: ProviderError): string {
  const upstream = [e.upstreamStatus, e.upstreamCode].filter((v) => v !== undefined).join(' ');
  return `${e.code}: ${e.message}${upstream ? ` [upstream ${upstream}]` : ''}`;
}

const UPSTREAM_DETAIL = / \[upstream [^\]]*\]$/;

export function withoutUpstreamDetail(logError: string | null): string | null {
  return logError === null ? null : logError.replace(UPSTREAM_DETAIL, '');
}

// --- constructors used by the adapters -------------------------------------------------

export const providerTimeout = (): ProviderError => new ProviderError('timeout', 'The model provider did not answer in time', undefined, true);

export const providerAborted = (): ProviderError => new ProviderError('aborted', 'The request to the model provider was cancelled');

export const providerBadResponse = (what = 'a response that could not be understood'): ProviderError =>
  new ProviderError('bad_response', `The model provider sent ${what}`);
