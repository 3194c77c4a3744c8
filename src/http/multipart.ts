import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

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

/**
 * Read a multipart request part by part. Each file is buffered only up to maxFileBytes (the
 * parser stops and we answer 413), the running total up to maxRequestBytes, and at most maxFiles.
 */
export async function readMultipart(
  request: FastifyRequest,
  limits: MultipartLimits,
): Promise<{ fields: Record<string, string>; files: UploadedFile[] }> {
  if (!request.isMultipart()) {
    throw new AppError('unsupported_media_type', 'unsupported_media_type', 'Send multipart/form-data');
  }
  const fields: Record<string, string> = {};
  const files: UploadedFile[] = [];
  let total = 0;
  for await (const part of request.parts({ limits: { fileSize: limits.maxFileBytes, files: limits.maxFiles, fields: 50, fieldSize: 1_000_000, parts: limits.maxFiles + 50 } })) {
    if (part.type === 'file') {
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
  return { fields, files };
}
