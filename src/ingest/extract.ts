/**
 * Text extraction per document kind. Returns the *raw* extracted text (`fileData`);
 * normalisation is a separate step (normaliseText).
 *
 *  - text, markdown: decoded as is (UTF-8; UTF-16 with BOM accepted; a UTF-8 BOM is
 *    dropped; invalid bytes after the 8 KiB sniff window become U+FFFD; CRLF/CR → LF).
 *  - csv: one paragraph per row, header-aware `Header: value | ...` (see csvToText).
 *  - json: parsed, then flattened to `path: value` lines (see jsonToText);
 *    a JSON file that does not parse → IngestError corrupt.
 *  - html: html-to-text, no word wrapping; script/style/noscript/template/svg/iframe and
 *    images dropped; links keep their text only; headings become Markdown `#` lines so
 *    the chunker can split at them; lists get "- " / "1. " prefixes.
 *  - docx: mammoth → HTML (headings h1–h6, Title/Subtitle mapped too, images dropped,
 *    external file access off) → the same HTML-to-text path, so headings survive.
 *  - pdf: unpdf (serverless PDF.js) per-page text, then merged like unpdf's mergePages
 *    (pages joined by a line break, spaces collapsed, at most one blank line) after
 *    removing running headers/footers and page numbers (see mergePdfPages). Runs on a
 *    copy of the bytes (PDF.js transfers/detaches the buffer it is given), with a time limit.
 *
 * A document with no visible text (empty file, whitespace only, a scanned PDF without a
 * text layer, an empty DOCX) → IngestError corrupt "… contains no text" (HTTP 400).
 */
import { htmlToText } from 'html-to-text';
import type { FormatCallback, HtmlToTextOptions } from 'html-to-text';
import mammoth from 'mammoth';
import { extractText as unpdfExtractText, getResolvedPDFJS } from 'unpdf';
import type { DocumentKind } from './detect.js';
import { IngestError } from './errors.js';
import { sanitizeFilename } from './filename.js';
import { hasVisibleText } from './normalise.js';
import { csvToText, jsonToText } from './structured.js';

export interface ExtractOptions {
  /** Give up on a PDF after this many milliseconds (default 60 000). */
  pdfTimeoutMs?: number;
}

const DEFAULT_PDF_TIMEOUT_MS = 60_000;

export async function extractText(
  bytes: Uint8Array,
  kind: DocumentKind,
  filename: string,
  options: ExtractOptions = {},
): Promise<string> {
  const name = sanitizeFilename(filename);
  let text: string;
  switch (kind) {
    case 'text':
    case 'markdown':
      text = decodeText(bytes);
      break;
    case 'csv':
      text = csvToText(decodeText(bytes));
      break;
    case 'json': {
      const source = decodeText(bytes);
      let value: unknown;
      try {
        value = JSON.parse(source);
      } catch (err) {
        const detail = err instanceof Error ? err.message.replace(/\s+/g, ' ') : String(err);
        throw new IngestError('corrupt', filename, `"${name}" is not valid JSON: ${detail}`, { cause: err });
      }
      text = jsonToText(value);
      break;
    }
    case 'html':
      text = htmlToPlainText(decodeText(bytes));
      break;
    case 'docx':
      text = await extractDocx(bytes, filename, name);
      break;
    case 'pdf':
      text = await extractPdf(bytes, filename, name, options.pdfTimeoutMs ?? DEFAULT_PDF_TIMEOUT_MS);
      break;
    default: {
      const never: never = kind;
      throw new IngestError('unsupported_type', filename, `"${name}" has an unsupported type (${String(never)}).`);
    }
  }
  if (!hasVisibleText(text)) {
    const hint =
      kind === 'pdf'
        ? ' (it may be a scanned image without a text layer; OCR is not supported)'
        : '';
    throw new IngestError('corrupt', filename, `"${name}" contains no text${hint}.`);
  }
  return text;
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

// ---------------------------------------------------------------------------
// HTML (also used for DOCX via mammoth)
// ---------------------------------------------------------------------------

/** Heading → "## Heading" on its own paragraph. */
const atxHeading: FormatCallback = (elem, walk, builder, formatOptions) => {
  const level = Math.min(6, Math.max(1, Number(formatOptions['level']) || 1));
  builder.openBlock({ leadingLineBreaks: 2 });
  walk(elem.children, builder);
  builder.closeBlock({
    trailingLineBreaks: 2,
    blockTransform: (s: string) => {
      const t = s.replace(/\s+/g, ' ').trim();
      return t ? `${'#'.repeat(level)} ${t}` : '';
    },
  });
};

const SKIP = ['script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object', 'embed', 'img', 'picture', 'video', 'audio', 'head', 'hr'];

const HTML_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  formatters: { atxHeading },
  selectors: [
    ...SKIP.map((selector) => ({ selector, format: 'skip' })),
    { selector: 'a', options: { ignoreHref: true } },
    ...[1, 2, 3, 4, 5, 6].map((level) => ({ selector: `h${level}`, format: 'atxHeading', options: { level } })),
    { selector: 'ul', options: { itemPrefix: '- ' } },
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 1000, colSpacing: 3 } },
  ],
};

export function htmlToPlainText(html: string): string {
  return htmlToText(html, {
    ...HTML_OPTIONS,
    // The default limit (16 MiB) silently truncates; the upload size limit applies instead.
    limits: { maxInputLength: Math.max(html.length + 1, 1 << 24) },
  });
}

// ---------------------------------------------------------------------------
// DOCX
// ---------------------------------------------------------------------------

const DOCX_STYLE_MAP = [
  "p[style-name='Title'] => h1:fresh",
  "p[style-name='Subtitle'] => h2:fresh",
];

async function extractDocx(bytes: Uint8Array, filename: string, name: string): Promise<string> {
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
      {
        styleMap: DOCX_STYLE_MAP,
        externalFileAccess: false,
        // Drop images instead of inlining them as base64 data URIs.
        convertImage: mammoth.images.imgElement(async () => ({ src: '' })),
      },
    );
    html = result.value;
  } catch (err) {
    throw new IngestError('corrupt', filename, `"${name}" could not be read as a Word document; it may be damaged or truncated.`, { cause: err });
  }
  return htmlToPlainText(html);
}

// ---------------------------------------------------------------------------
// PDF
// ---------------------------------------------------------------------------

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`timed out after ${ms} ms`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function extractPdf(bytes: Uint8Array, filename: string, name: string, timeoutMs: number): Promise<string> {
  const { getDocument } = await getResolvedPDFJS();
  // PDF.js takes ownership of (detaches) the buffer it is given: always pass a copy.
  const task = getDocument({
    data: bytes.slice(),
    isEvalSupported: false,
    useSystemFonts: true,
    disableFontFace: true,
    verbosity: 0,
  });
  // A rejection of task.promise after we gave up must not become an unhandled rejection.
  task.promise.catch(() => undefined);
  let pdf: Awaited<typeof task.promise> | undefined;
  try {
    pdf = await withTimeout(task.promise, timeoutMs, () => void task.destroy().catch(() => undefined));
    const doc = pdf;
    const { text } = await withTimeout(unpdfExtractText(doc, { mergePages: false }), timeoutMs, () => void doc.destroy().catch(() => undefined));
    return mergePdfPages(text);
  } catch (err) {
    const errName = err instanceof Error ? err.name : '';
    if (errName === 'PasswordException') {
      throw new IngestError('corrupt', filename, `"${name}" is password-protected; remove the password and upload it again.`, { cause: err });
    }
    if (err instanceof Error && err.message.startsWith('timed out')) {
      throw new IngestError('corrupt', filename, `"${name}" could not be read: PDF text extraction took too long.`, { cause: err });
    }
    throw new IngestError('corrupt', filename, `"${name}" is not a readable PDF; it may be damaged or truncated.`, { cause: err });
  } finally {
    if (pdf) await pdf.destroy().catch(() => undefined);
    else await task.destroy().catch(() => undefined);
  }
}

const PAGE_NUMBER = /^(?:page\s*)?(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s*(?:of|\/)\s*\d{1,4})?$/i;
const EDGE_LINES = 2;

/**
 * Join per-page PDF text, dropping page furniture: lines among the first/last two of a
 * page that are page numbers ("12", "iv", "Page 3 of 9"), or that repeat (digits ignored)
 * at the top/bottom of at least half the pages (min. 3) — running headers and footers
 * (kept at the top of page 1, where the running header is usually the title).
 */
export function mergePdfPages(pages: string | string[]): string {
  const list = typeof pages === 'string' ? [pages] : pages;
  const pageLines = list.map((p) => p.split('\n').map((l) => l.trim()).filter((l) => l.length > 0));
  const key = (l: string): string => l.replace(/\d+/g, '#').toLowerCase();
  const counts = new Map<string, number>();
  for (const lines of pageLines) {
    const edge = new Set<string>();
    for (let i = 0; i < Math.min(EDGE_LINES, lines.length); i++) edge.add(key(lines[i]!));
    for (let i = Math.max(0, lines.length - EDGE_LINES); i < lines.length; i++) edge.add(key(lines[i]!));
    for (const k of edge) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const threshold = pageLines.length >= 3 ? Math.max(3, Math.ceil(pageLines.length / 2)) : Infinity;
  const furniture = (l: string): boolean => PAGE_NUMBER.test(l) || (counts.get(key(l)) ?? 0) >= threshold;
  const kept = pageLines.map((lines, page) => {
    let a = 0;
    let b = lines.length;
    // A running header on the first page is usually the document title: keep it there.
    const top = page === 0 ? (l: string): boolean => PAGE_NUMBER.test(l) : furniture;
    while (a < Math.min(EDGE_LINES, b) && top(lines[a]!)) a++;
    while (b > a && b > lines.length - EDGE_LINES && furniture(lines[b - 1]!)) b--;
    return lines.slice(a, b).join('\n');
  });
  return kept
    .filter((p) => p.length > 0)
    .join('\n')
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n');
}
