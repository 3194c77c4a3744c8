/**
 * The one error taxonomy. Services throw AppError with a kind and a stable code; each kind has
 * one HTTP status (statusOf), which the HTTP layer (src/http/problem.ts) renders as problem+json
 * and a stored failed turn keeps beside its code.
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

const STATUS: Record<ErrorKind, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  upstream: 502,
  upstream_timeout: 504,
};

export function statusOf(kind: ErrorKind): number {
  return STATUS[kind];
}

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
/**
 * A client-chosen id that is taken, whoever holds it (the caller, a teammate, another team):
 * one answer that does not echo the id, so no two cases can be told apart (docs/DECISIONS.md).
 */
export const idTaken = (what: 'workspace' | 'model' | 'Plus entry') => conflict(`A ${what} with this id already exists`);

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
