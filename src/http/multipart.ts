import type { FastifyRequest } from 'fastify';
import { AppError, badRequest } from '../errors.js';
import { assertNoNul } from './text-guard.js';

export interface UploadedFile {
  filename: string;
  declaredMime: string | undefined;
  bytes: Buffer;
}

export interface MultipartLimits {
  maxFileBytes: number;
  maxRequestBytes: number;
  maxFiles: number;
}

/** The one field name file parts are accepted under (the seed's `files` parameter). */
export const FILE_FIELD = 'files';

/**
 * Read a multipart request part by part. A file part under another field name is refused (400
 * naming the field) rather than stored as if it were one of `files` or silently dropped. Each file is buffered only up to maxFileBytes (the
 * parser stops and we answer 413), the running total up to maxRequestBytes, and at most maxFiles.
 */
export async function readMultipart(request: FastifyRequest, limits: MultipartLimits): Promise<{ fields: Record<string, string>; files: UploadedFile[] }> {
  if (!request.isMultipart()) {
    throw new AppError('unsupported_media_type', 'unsupported_media_type', 'Send multipart/form-data');
  }
  const fields: Record<string, string> = {};
  const files: UploadedFile[] = [];
  let total = 0;
  const parts = request.parts({
    limits: { fileSize: limits.maxFileBytes, files: limits.maxFiles, fields: 50, fieldSize: 1_000_000, parts: limits.maxFiles + 50 },
  });
  try {
    for await (const part of parts) {
      if (part.type === 'file') {
        if (part.fieldname !== FILE_FIELD) {
          part.file.resume();
          throw badRequest('unexpected_file_field', `Files are accepted only in the "${FILE_FIELD}" field, not in "${part.fieldname}"`, [
            { path: `body/${part.fieldname}`, message: `send files as "${FILE_FIELD}"` },
          ]);
        }
        const bytes = await part.toBuffer();
        total += bytes.length;
        if (total > limits.maxRequestBytes) {
          throw new AppError('too_large', 'request_too_large', `The files of one request may total at most ${limits.maxRequestBytes} bytes`);
        }
        files.push({ filename: part.filename || 'file', declaredMime: part.mimetype || undefined, bytes });
      } else {
        fields[part.fieldname] = typeof part.value === 'string' ? part.value : String(part.value);
      }
    }
  } catch (err) {
    // busboy reports a malformed body (no boundary, cut short) as a plain Error: the client's fault.
    if (err instanceof AppError || typeof (err as { statusCode?: unknown }).statusCode === 'number') throw err;
    throw badRequest('malformed_multipart', 'The multipart/form-data body could not be read');
  }
  assertNoNul(fields, 'body');
  return { fields, files };
}
