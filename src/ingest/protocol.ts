/** Messages between the ingestion pool (main thread) and its workers. */
import type { IngestErrorKind } from './errors.js';
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
 * What the pool answers of a document: its chunks and facts, not its whole text again — the text
 * is in the chunks, and the copy of a message is deserialised on the main thread in one piece
 * (for an 18 MB document, ~0.1 s of the event loop per copy).
 */
export type IngestedFile = Omit<IngestedDocument, 'text' | 'processed'>;

export type JobResult = { id: number; ok: true; doc: IngestedFile } | { id: number; ok: false; error: JobError };

/**
 * Sent by a worker before it starts reading a file by OCR (the pool then allows the OCR time), and
 * after each page it read by OCR.
 */
export interface JobOcr {
  id: number;
  ocr: OcrProgress;
}
