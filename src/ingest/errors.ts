/**
 * Errors raised by the ingestion pipeline. The HTTP layer maps them:
 *   unsupported_type → 415 Unsupported Media Type
 *   corrupt          → 400 Bad Request
 * `message` is written for the end user and always names the file.
 */
export type IngestErrorKind = 'unsupported_type' | 'corrupt';

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

  /** Suggested HTTP status: 415 for unsupported_type, 400 for corrupt. */
  get httpStatus(): 400 | 415 {
    return this.kind === 'unsupported_type' ? 415 : 400;
  }
}
