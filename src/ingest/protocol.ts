/** Messages between the ingestion pool (main thread) and its workers. */
import type { IngestErrorKind } from './errors.js';
import type { PackedChunks } from './packed-chunks.js';
import type { IngestedDocument, IngestOptions, OcrProgress } from './pipeline.js';

export interface JobRequest {
  id: number;
  bytes: Uint8Array;
  filename: string;
  declaredMime: string | undefined;
  options: IngestOptions;
}

export type JobError =
  { ingest: true; kind: IngestErrorKind; filename: string; message: string } | { ingest: false; name: string; message: string; stack: string };

/**
 * What the pool answers of a document: its facts and its chunks packed (packed-chunks.ts), not
 * its whole text again — the text is in the chunks, and a message's copy is deserialised on the
 * main thread in one piece (for an 18 MB document, ~0.1 s of the event loop per copy).
 */
export type IngestedFile = Omit<IngestedDocument, 'text' | 'processed' | 'chunks'> & { chunks: PackedChunks };

export type JobResult = { id: number; ok: true; doc: IngestedFile } | { id: number; ok: false; error: JobError };

/**
 * Sent by a worker before it starts reading a file by OCR (the pool then allows the OCR time), and
 * after each page it read by OCR.
 */
export interface JobOcr {
  id: number;
  ocr: OcrProgress;
}
