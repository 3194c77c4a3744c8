/**
 * Errors raised by the ingestion pipeline. The HTTP layer maps them:
 *   unsupported_type → 415 Unsupported Media Type
 *   corrupt          → 400 Bad Request
 *   too_large        → 413 Content Too Large (a cap of limits.ts, the time or the memory limit)
 * `message` is written for the end user and always names the file (and, for too_large, the cap).
 */
export type IngestErrorKind = 'unsupported_type' | 'corrupt' | 'too_large';

export class IngestError extends Error {
  override readonly name = 'IngestError';

  constructor(
    public readonly kind: IngestErrorKind,
    public readonly filename: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Suggested HTTP status: 415 for unsupported_type, 413 for too_large, 400 for corrupt. */
  get httpStatus(): 400 | 413 | 415 {
    return this.kind === 'unsupported_type' ? 415 : this.kind === 'too_large' ? 413 : 400;
  }
}
