/**
 * Atrium document ingestion: type detection, text extraction, normalisation and
 * token-aware chunking. No database, no HTTP.
 *
 * The server ingests through an IngestPool (worker threads, caps, timeout):
 *   const pool = new IngestPool({ workers: 2, limits });
 *   const doc = await pool.ingest(bytes, sanitizeFilename(upload.filename), upload.mimetype);
 *   // doc.chunks[i].text → fileData, doc.chunks[i].processed → fileDataProcessed
 * Errors are IngestError: kind 'unsupported_type' → HTTP 415, 'corrupt' → HTTP 400,
 * 'too_large' → HTTP 413.
 *
 * This module is what the main thread imports: it never loads the extractors (unpdf, mammoth,
 * html-to-text, tesseract.js) — only the workers do, through pipeline.ts, which in-process callers (tests,
 * benchmarks) import directly.
 */
export { chunkText, DEFAULT_MAX_TOKENS, DEFAULT_OVERLAP_TOKENS } from './chunk.js';
export type { Chunk, ChunkOptions } from './chunk.js';
export { CANONICAL_MIME, detectKind } from './detect.js';
export type { DocumentKind } from './detect.js';
export { IngestError } from './errors.js';
export type { IngestErrorKind } from './errors.js';
export { MAX_FILENAME_LENGTH, sanitizeFilename } from './filename.js';
export { DEFAULT_LIMITS, LIMIT_VARIABLES } from './limits.js';
export type { IngestLimits } from './limits.js';
export { normaliseText } from './normalise.js';
export type { IngestedDocument, IngestOptions } from './pipeline.js';
export { ChunkReader } from './packed-chunks.js';
export { IngestPool } from './pool.js';
export type { IngestPoolOptions, IngestPoolStats } from './pool.js';
export { countTokens, TOKEN_ENCODING } from './tokens.js';
