/**
 * The one error taxonomy. Services throw AppError with a kind and a stable code; the HTTP layer
 * (src/http/problem.ts) is the only place that turns a kind into a status code.
 */
export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'upstream'
  | 'upstream_timeout';

export interface FieldError {
  path: string;
  message: string;
}

export class AppError extends Error {
  /** Seconds for a `Retry-After` header (e.g. a provider's rate limit passed on). */
  retryAfterSeconds?: number;

  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (code: string, message: string, errors?: FieldError[]) =>
  new AppError('bad_request', code, message, errors);
export const notFound = (what: string) => new AppError('not_found', 'not_found', `${what} not found`);
export const forbidden = (message: string) => new AppError('forbidden', 'forbidden', message);
export const conflict = (message: string) => new AppError('conflict', 'conflict', message);

/** A classified provider failure (providers/errors.ts) as the app's error: 504 for timeouts, else 502. */
/** Seconds in `Retry-After` when a rate-limiting provider named none. */
const DEFAULT_PROVIDER_RETRY_AFTER = 10;

/**
 * A classified provider failure as an AppError: a timeout is 504, a provider's rate limit our 429
 * with its Retry-After (docs/DECISIONS.md, "Chat"), anything else 502.
 */
export function upstreamError(pe: { kind: string; code: string; message: string; retryAfterSeconds?: number | undefined }): AppError {
  if (pe.kind === 'upstream_rate_limited') {
    const e = new AppError('rate_limited', pe.code, pe.message);
    e.retryAfterSeconds = pe.retryAfterSeconds ?? DEFAULT_PROVIDER_RETRY_AFTER;
    return e;
  }
  return new AppError(pe.kind === 'timeout' ? 'upstream_timeout' : 'upstream', pe.code, pe.message);
}
