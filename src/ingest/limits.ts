/**
 * Caps on what one uploaded file may cost to ingest. Each is checked as early as it can be
 * (pages before any page is read, inflated sizes before the DOCX is parsed, characters while
 * PDF pages are read), so a hostile file is refused before it has cost much. Exceeding one is
 * an IngestError 'too_large' (HTTP 413) naming the file, the cap and the variable that sets it.
 */
import { IngestError } from './errors.js';
import { sanitizeFilename } from './filename.js';

export interface IngestLimits {
  /** Pages of one PDF. */
  maxPdfPages: number;
  /** Inflated bytes of one member of a DOCX (ZIP) archive. */
  maxInflatedMemberBytes: number;
  /** Inflated bytes of all members of a DOCX (ZIP) archive together. */
  maxInflatedTotalBytes: number;
  /** Characters of text extracted from one file. */
  maxChars: number;
  /** Chunks made from one file. */
  maxChunks: number;
  /** Pages of one file read by OCR (PDF pages without a text layer). */
  maxOcrPages: number;
  /** Pixels of one image file read by OCR (a PDF page is rendered at most this large). */
  maxOcrPixels: number;
}

export const DEFAULT_LIMITS: Readonly<IngestLimits> = Object.freeze({
  maxPdfPages: 2000,
  maxInflatedMemberBytes: 50 * 1_048_576,
  maxInflatedTotalBytes: 100 * 1_048_576,
  maxChars: 25_000_000,
  maxChunks: 20_000,
  maxOcrPages: 50,
  maxOcrPixels: 40_000_000,
});

/** The environment variable that sets each cap (src/config.ts), named in refusals for the operator. */
export const LIMIT_VARIABLES: Readonly<Record<keyof IngestLimits | 'timeoutMs' | 'ocrTimeoutMs' | 'memoryMb', string>> = Object.freeze({
  maxPdfPages: 'INGEST_MAX_PDF_PAGES',
  maxInflatedMemberBytes: 'INGEST_MAX_INFLATED_MEMBER_BYTES',
  maxInflatedTotalBytes: 'INGEST_MAX_INFLATED_TOTAL_BYTES',
  maxChars: 'INGEST_MAX_CHARS',
  maxChunks: 'INGEST_MAX_CHUNKS',
  maxOcrPages: 'INGEST_OCR_MAX_PAGES',
  maxOcrPixels: 'INGEST_OCR_MAX_PIXELS',
  timeoutMs: 'INGEST_TIMEOUT_MS',
  ocrTimeoutMs: 'INGEST_OCR_TIMEOUT_MS',
  memoryMb: 'INGEST_WORKER_MAX_MEMORY_MB',
});

export function resolveLimits(limits: Partial<IngestLimits> | undefined): IngestLimits {
  return { ...DEFAULT_LIMITS, ...limits };
}

/** IngestError too_large: `"name" <what>; the limit is <limit> (<VARIABLE>).` */
export function overLimit(filename: string, what: string, limit: string, cap: keyof typeof LIMIT_VARIABLES): IngestError {
  const name = sanitizeFilename(filename);
  return new IngestError('too_large', filename, `"${name}" ${what}; the limit is ${limit} (${LIMIT_VARIABLES[cap]}).`);
}

/** 52428800 → "50 MiB"; 1500 → "1500 bytes". */
export function formatBytes(n: number): string {
  if (n >= 1_048_576 && n % 1_048_576 === 0) return `${n / 1_048_576} MiB`;
  if (n >= 1_048_576) return `${(n / 1_048_576).toFixed(1)} MiB`;
  return `${n} bytes`;
}
