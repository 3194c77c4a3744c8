/**
 * Atrium document ingestion: type detection, text extraction, normalisation and
 * token-aware chunking. Pure functions: no database, no HTTP.
 *
 * Typical use:
 *   const doc = await ingestDocument(bytes, sanitizeFilename(upload.filename), upload.mimetype);
 *   // doc.chunks[i].text → fileData, doc.chunks[i].processed → fileDataProcessed
 * Errors are IngestError: kind 'unsupported_type' → HTTP 415, 'corrupt' → HTTP 400.
 */
import { chunkText } from './chunk.js';
import type { Chunk, ChunkOptions } from './chunk.js';
import { detectKind } from './detect.js';
import type { DocumentKind } from './detect.js';
import { extractText } from './extract.js';
import type { ExtractOptions } from './extract.js';
import { normaliseText } from './normalise.js';

export { chunkText, DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP_TOKENS } from './chunk.js';
export type { Chunk, ChunkOptions } from './chunk.js';
export { CANONICAL_MIME, detectKind } from './detect.js';
export type { DocumentKind } from './detect.js';
export { IngestError } from './errors.js';
export type { IngestErrorKind } from './errors.js';
export { extractText } from './extract.js';
export type { ExtractOptions } from './extract.js';
export { MAX_FILENAME_LENGTH, sanitizeFilename } from './filename.js';
export { normaliseText } from './normalise.js';
export { countTokens, TOKEN_ENCODING } from './tokens.js';

export type IngestOptions = ChunkOptions & ExtractOptions;

export interface IngestedDocument {
  kind: DocumentKind;
  /** Canonical MIME type of the detected kind. */
  mimeType: string;
  /** Extracted raw text (fileData). */
  text: string;
  /** Normalised text of the whole document (fileDataProcessed). */
  processed: string;
  chunks: Chunk[];
  /** Sum of the chunks' tokenSize (overlapping text counts in each chunk that holds it). */
  tokenSize: number;
}

/**
 * Per-kind chunking defaults: CSV rows and JSON records are never headings; PDF text is
 * not Markdown (a line starting with "# " there is usually a comment in a code sample).
 * Markdown, HTML and DOCX (whose headings extraction renders as "# " lines) and plain
 * text use Markdown heading syntax.
 */
export function chunkDefaultsFor(kind: DocumentKind): ChunkOptions {
  switch (kind) {
    case 'csv':
    case 'json':
      return { headingAware: false };
    case 'pdf':
      return { markdown: false };
    default:
      return {};
  }
}

/**
 * detectKind → extractText → normaliseText → chunkText.
 * Throws IngestError ('unsupported_type' or 'corrupt'; an empty or text-less document is
 * 'corrupt'). Never hangs on a hostile PDF (time limit, see ExtractOptions.pdfTimeoutMs).
 */
export async function ingestDocument(
  bytes: Uint8Array,
  filename: string,
  declaredMime?: string,
  opts?: IngestOptions,
): Promise<IngestedDocument> {
  const { kind, mimeType } = detectKind(bytes, filename, declaredMime);
  const text = await extractText(bytes, kind, filename, opts);
  const processed = normaliseText(text);
  const chunks = chunkText(text, { ...chunkDefaultsFor(kind), ...opts });
  let tokenSize = 0;
  for (const c of chunks) tokenSize += c.tokenSize;
  return { kind, mimeType, text, processed, chunks, tokenSize };
}
