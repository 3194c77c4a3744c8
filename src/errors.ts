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
