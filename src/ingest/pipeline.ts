/**
 * The whole ingestion of one file, in the calling thread: detectKind → extractText →
 * normaliseText → chunkText. The server runs it only inside worker threads (worker.ts via
 * pool.ts); tests and benchmarks call it directly. It imports the extractors (unpdf, mammoth,
 * html-to-text), which is why the main thread never imports this module.
 */
import { chunkText } from './chunk.js';
import type { Chunk, ChunkOptions } from './chunk.js';
import { detectKind } from './detect.js';
import type { DocumentKind } from './detect.js';
import { extractText } from './extract.js';
import type { ExtractOptions } from './extract.js';
import { overLimit, resolveLimits } from './limits.js';
import { normaliseText } from './normalise.js';

export { extractText, htmlToPlainText, mergePdfPages } from './extract.js';
export type { ExtractOptions, OcrProgress } from './extract.js';

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
  /** Some of the text was read by OCR (an image, or PDF pages without a text layer). */
  ocr: boolean;
}

/**
 * Per-kind chunking defaults: CSV rows and JSON records are never headings; PDF text is
 * not Markdown (a line starting with "# " there is usually a comment in a code sample), nor is
 * what OCR reads in an image.
 * Markdown, HTML and DOCX (whose headings extraction renders as "# " lines) and plain
 * text use Markdown heading syntax.
 */
export function chunkDefaultsFor(kind: DocumentKind): ChunkOptions {
  switch (kind) {
    case 'csv':
    case 'json':
      return { headingAware: false };
    case 'pdf':
    case 'png':
    case 'jpeg':
    case 'tiff':
    case 'webp':
      return { markdown: false };
    default:
      return {};
  }
}

/**
 * detectKind → extractText → normaliseText → chunkText.
 * Throws IngestError ('unsupported_type', 'corrupt' — an empty or text-less document is
 * corrupt — or 'too_large' past a cap of limits.ts, including maxChunks).
 */
export async function ingestDocument(bytes: Uint8Array, filename: string, declaredMime?: string, opts?: IngestOptions): Promise<IngestedDocument> {
  const { kind, mimeType } = detectKind(bytes, filename, declaredMime);
  let ocr = false;
  const text = await extractText(bytes, kind, filename, {
    ...opts,
    onOcr: (progress) => {
      ocr = true;
      opts?.onOcr?.(progress);
    },
  });
  const processed = normaliseText(text);
  const chunks = chunkText(text, { ...chunkDefaultsFor(kind), ...opts });
  const { maxChunks } = resolveLimits(opts?.limits);
  if (chunks.length > maxChunks) {
    throw overLimit(filename, `makes ${chunks.length} chunks`, `${maxChunks} chunks per file`, 'maxChunks');
  }
  let tokenSize = 0;
  for (const c of chunks) tokenSize += c.tokenSize;
  return { kind, mimeType, text, processed, chunks, tokenSize, ocr };
}
