import { isFinalRefusal } from './providers/errors.js';

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
  /**
   * A 5xx that sending the same request again cannot change (a provider that rejects the model's
   * key): answered with `x-should-retry: false`, as every 4xx but 408 and 429 with Retry-After is.
   */
  final?: boolean;

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

export const badRequest = (code: string, message: string, errors?: FieldError[]) => new AppError('bad_request', code, message, errors);
export const notFound = (what: string) => new AppError('not_found', 'not_found', `${what} not found`);
export const forbidden = (message: string) => new AppError('forbidden', 'forbidden', message);
export const conflict = (message: string) => new AppError('conflict', 'conflict', message);
/**
 * A client-chosen id that is taken, whoever holds it (the caller, a teammate, another team):
 * one answer that does not echo the id, so no two cases can be told apart (docs/DECISIONS.md).
 */
export const idTaken = (what: 'workspace' | 'model' | 'Plus entry') => conflict(`A ${what} with this id already exists`);

/** Seconds in `Retry-After` when a rate-limiting provider named none. */
const DEFAULT_PROVIDER_RETRY_AFTER = 10;

/**
 * A classified provider failure as an AppError, with the status a client acts on (table in
 * docs/API.md, "Provider failures"): a prompt longer than the window is 400
 * `context_length_exceeded`, a model the provider does not know 404 `model_not_found`, a timeout
 * 504, a provider's rate limit our 429 with its Retry-After, anything else 502 — marked final
 * when a retry cannot help (a rejected key, refused content, another 4xx).
 */
export function upstreamError(pe: {
  kind: string;
  code: string;
  message: string;
  retryAfterSeconds?: number | undefined;
  upstreamStatus?: number | undefined;
}): AppError {
  if (pe.kind === 'upstream_rate_limited') {
    const e = new AppError('rate_limited', pe.code, pe.message);
    e.retryAfterSeconds = pe.retryAfterSeconds ?? DEFAULT_PROVIDER_RETRY_AFTER;
    return e;
  }
  if (pe.kind === 'upstream_context_length') return new AppError('bad_request', 'context_length_exceeded', pe.message);
  if (pe.kind === 'upstream_tools_unsupported') {
    const e = new AppError('bad_request', 'tools_unsupported', pe.message);
    e.final = true;
    return e;
  }
  if (pe.kind === 'upstream_model_not_found') return new AppError('not_found', 'model_not_found', pe.message);
  const e = new AppError(pe.kind === 'timeout' ? 'upstream_timeout' : 'upstream', pe.code, pe.message);
  if (isFinalRefusal(pe)) e.final = true;
  return e;
}

/** Whether a client should send the same request again: not for a final refusal. */
export function retryHelps(status: number, err?: unknown): boolean {
  if (err instanceof AppError && err.final) return false;
  if (status === 408) return true;
  // A 429 with Retry-After passes; one without (a spent `total` budget) never does.
  if (status === 429) return !(err instanceof AppError) || err.retryAfterSeconds !== undefined;
  return status >= 500;
}
