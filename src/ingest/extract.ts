/**
 * Text extraction per document kind. Returns the *raw* extracted text (`fileData`);
 * normalisation is a separate step (normaliseText).
 *
 *  - text, markdown: decoded as is (UTF-8; UTF-16 with BOM accepted; a UTF-8 BOM is
 *    dropped; invalid bytes after the 8 KiB sniff window become U+FFFD; CRLF/CR → LF).
 *  - csv: one paragraph per row, header-aware `Header: value | ...` (see csvToText).
 *  - json: parsed, then flattened to `path: value` lines (see jsonToText);
 *    a JSON file that does not parse → IngestError corrupt.
 *  - html: html.ts (html-to-text, nesting flattened below a safe depth).
 *  - docx: docx.ts (inflated sizes checked, mammoth → HTML → html.ts).
 *  - pdf: pdf.ts (page cap, one page at a time, running headers removed, time limit); a page
 *    without a text layer is rendered and read by OCR (scan.ts).
 *  - png, jpeg, tiff, webp: read by OCR (scan.ts; pixel cap from the header).
 *
 * Caps (limits.ts): the characters extracted from any file (maxChars), plus the per-format
 * ones above. A document so deeply nested that a parser overflows the stack is corrupt (400).
 *
 * A document with no visible text (empty file, whitespace only, a scan in which OCR finds
 * none, an empty DOCX) → IngestError corrupt "… contains no text" (HTTP 400).
 */
import { isImageKind, type DocumentKind } from './detect.js';
import { extractDocx } from './docx.js';
import { IngestError } from './errors.js';
import { sanitizeFilename } from './filename.js';
import { htmlToPlainText } from './html.js';
import { overLimit, resolveLimits, type IngestLimits } from './limits.js';
import { hasVisibleText } from './normalise.js';
import { extractPdf } from './pdf.js';
import { ocrImage } from './scan.js';
import { csvToText, jsonToText } from './structured.js';

export { htmlToPlainText } from './html.js';
export { mergePdfPages } from './pdf.js';

export interface ExtractOptions {
  /** Give up on a PDF after this many milliseconds (default 60 000). */
  pdfTimeoutMs?: number;
  /** Caps on pages, inflated bytes and characters (defaults: DEFAULT_LIMITS). */
  limits?: Partial<IngestLimits>;
  /** Called before the first image or page of the file is read by OCR, and after each page read by OCR. */
  onOcr?: (progress: OcrProgress) => void;
}

/** How far the reading of a scan is: pages of the file (1 for an image), and pages read so far. */
export interface OcrProgress {
  pages: number;
  pagesRead: number;
}

const DEFAULT_PDF_TIMEOUT_MS = 60_000;

export async function extractText(bytes: Uint8Array, kind: DocumentKind, filename: string, options: ExtractOptions = {}): Promise<string> {
  const name = sanitizeFilename(filename);
  const limits = resolveLimits(options.limits);
  let text: string;
  try {
    text = await extractKind(bytes, kind, filename, name, options.pdfTimeoutMs ?? DEFAULT_PDF_TIMEOUT_MS, limits, options.onOcr ?? (() => undefined));
  } catch (err) {
    if (err instanceof RangeError && /call stack/i.test(err.message)) {
      throw new IngestError('corrupt', filename, `"${name}" is too deeply nested to be read.`, { cause: err });
    }
    throw err;
  }
  if (text.length > limits.maxChars) {
    throw overLimit(filename, `holds ${text.length} characters of text`, `${limits.maxChars} characters per file`, 'maxChars');
  }
  if (!hasVisibleText(text)) {
    const hint = kind === 'pdf' || isImageKind(kind) ? ' (OCR found none in it)' : '';
    throw new IngestError('corrupt', filename, `"${name}" contains no text${hint}.`);
  }
  return text;
}

async function extractKind(
  bytes: Uint8Array,
  kind: DocumentKind,
  filename: string,
  name: string,
  pdfTimeoutMs: number,
  limits: IngestLimits,
  onOcr: (progress: OcrProgress) => void,
): Promise<string> {
  switch (kind) {
    case 'text':
    case 'markdown':
      return decodeText(bytes);
    case 'csv':
      return csvToText(decodeText(bytes));
    case 'json': {
      const source = decodeText(bytes);
      let value: unknown;
      try {
        value = JSON.parse(source);
      } catch (err) {
        const detail = err instanceof Error ? err.message.replace(/\s+/g, ' ') : String(err);
        throw new IngestError('corrupt', filename, `"${name}" is not valid JSON: ${detail}`, { cause: err });
      }
      return jsonToText(value);
    }
    case 'html':
      return htmlToPlainText(decodeText(bytes));
    case 'docx':
      return extractDocx(bytes, filename, name, limits);
    case 'pdf':
      return extractPdf(bytes, filename, name, pdfTimeoutMs, limits, onOcr);
    case 'png':
    case 'jpeg':
    case 'tiff':
    case 'webp':
      onOcr({ pages: 1, pagesRead: 0 });
      return ocrImage(bytes, kind, filename, name, limits);
    default: {
      const never: never = kind;
      throw new IngestError('unsupported_type', filename, `"${name}" has an unsupported type (${String(never)}).`);
    }
  }
}

// ---------------------------------------------------------------------------
// Text decoding
// ---------------------------------------------------------------------------

const utf8 = new TextDecoder('utf-8'); // strips a UTF-8 BOM, replaces invalid bytes

/** Bytes → string (UTF-8, or UTF-16 with a BOM); CRLF and lone CR line endings become LF. */
export function decodeText(bytes: Uint8Array): string {
  let text: string;
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) text = new TextDecoder('utf-16le').decode(bytes);
  else if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) text = new TextDecoder('utf-16be').decode(bytes);
  else text = utf8.decode(bytes);
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}
