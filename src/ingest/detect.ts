/**
 * Document type detection from the bytes AND the declared MIME type / extension.
 *
 * Rules, in order:
 *  1. `%PDF-` opening the file → pdf, whatever the name (also anywhere in the first 1 KiB,
 *     where PDF readers look for it, when the file is named/declared PDF).
 *  2. A ZIP archive (`PK\x03\x04`) whose entries include `word/document.xml` → docx.
 *     Any other ZIP (xlsx, pptx, odt, plain archives) → unsupported_type.
 *     A ZIP whose directory cannot be read (truncated) → docx if `word/document.xml`
 *     appears in its local headers (extraction then reports it corrupt), else unsupported.
 *  3. A PNG, JPEG, TIFF or WebP image (by magic number) → that image kind, read by OCR, unless
 *     the file is named or declared as another type (a text file that is really a picture is
 *     refused, as below).
 *     Other known binary formats by magic number (GIF, gzip, bzip2, xz, zstd, 7z,
 *     RAR, ELF, Windows PE, Mach-O, Java class, WebAssembly, SQLite, OLE2 / legacy .doc,
 *     RTF, audio/video containers) → unsupported_type, even when named `.txt`.
 *  4. Anything with NUL bytes or invalid UTF-8 in the first 8 KiB → unsupported_type
 *     ("not a text file"), except UTF-16 text with a byte-order mark, which is accepted.
 *  5. A file that *claims* to be a PDF, DOCX or image (extension or declared type) but fails
 *     rules 1–3 → corrupt (400): the user meant to upload such a document and it is
 *     damaged or mislabelled; silently indexing it as something else would hide that.
 *  6. Remaining text is classified by declared MIME type when it is a specific text type
 *     we know (text/markdown, text/csv, application/json or +json, text/html, xhtml),
 *     else by extension, else text/plain. Generic declarations
 *     (application/octet-stream, text/plain, empty) defer to the extension.
 *     Content sniffing: text starting with `<!doctype html` or `<html` is html unless it
 *     was declared/named json or csv.
 *     JSON is not parsed here: extraction parses it and a `.json` that does not parse
 *     is reported corrupt.
 */
import { IngestError } from './errors.js';
import { sanitizeFilename } from './filename.js';
import type { ImageFormat } from './image.js';
import { readZipDirectory } from './zip.js';

export type DocumentKind = 'text' | 'markdown' | 'csv' | 'json' | 'html' | 'pdf' | 'docx' | ImageFormat;

/** Image kinds: their text is read by OCR. */
export const IMAGE_KINDS: ReadonlySet<DocumentKind> = new Set<ImageFormat>(['png', 'jpeg', 'tiff', 'webp']);
export const isImageKind = (kind: DocumentKind): kind is ImageFormat => IMAGE_KINDS.has(kind);

export const CANONICAL_MIME: Readonly<Record<DocumentKind, string>> = {
  text: 'text/plain',
  markdown: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  png: 'image/png',
  jpeg: 'image/jpeg',
  tiff: 'image/tiff',
  webp: 'image/webp',
};

const SNIFF_BYTES = 8192;

const EXTENSION_KIND: Readonly<Record<string, DocumentKind>> = {
  md: 'markdown',
  markdown: 'markdown',
  mdown: 'markdown',
  mkd: 'markdown',
  mkdn: 'markdown',
  mdx: 'markdown',
  csv: 'csv',
  json: 'json',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  pdf: 'pdf',
  docx: 'docx',
  txt: 'text',
  text: 'text',
  png: 'png',
  jpg: 'jpeg',
  jpeg: 'jpeg',
  jpe: 'jpeg',
  tif: 'tiff',
  tiff: 'tiff',
  webp: 'webp',
};

const MIME_KIND: Readonly<Record<string, DocumentKind>> = {
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/x-csv': 'csv',
  'text/comma-separated-values': 'csv',
  'application/json': 'json',
  'text/json': 'json',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  [CANONICAL_MIME.docx]: 'docx',
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/pjpeg': 'jpeg',
  'image/tiff': 'tiff',
  'image/webp': 'webp',
};

interface Magic {
  readonly label: string;
  readonly test: (b: Uint8Array) => boolean;
}

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0): boolean => {
  if (b.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
};
const ascii = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));

const IMAGE_MAGICS: ReadonlyArray<Magic & { kind: ImageFormat }> = [
  { kind: 'png', label: 'a PNG image', test: (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { kind: 'jpeg', label: 'a JPEG image', test: (b) => startsWith(b, [0xff, 0xd8, 0xff]) },
  { kind: 'webp', label: 'a WebP image', test: (b) => startsWith(b, ascii('RIFF')) && startsWith(b, ascii('WEBP'), 8) },
  { kind: 'tiff', label: 'a TIFF image', test: (b) => startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a]) },
];

const BINARY_MAGICS: readonly Magic[] = [
  { label: 'a GIF image', test: (b) => startsWith(b, ascii('GIF87a')) || startsWith(b, ascii('GIF89a')) },
  { label: 'a WAV/AVI file', test: (b) => startsWith(b, ascii('RIFF')) },
  { label: 'an icon file', test: (b) => startsWith(b, [0x00, 0x00, 0x01, 0x00]) },
  { label: 'a gzip archive', test: (b) => startsWith(b, [0x1f, 0x8b]) },
  { label: 'a bzip2 archive', test: (b) => startsWith(b, ascii('BZh')) && startsWith(b, [0x31, 0x41, 0x59, 0x26, 0x53, 0x59], 4) },
  { label: 'an xz archive', test: (b) => startsWith(b, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]) },
  { label: 'a zstd archive', test: (b) => startsWith(b, [0x28, 0xb5, 0x2f, 0xfd]) },
  { label: 'a 7-Zip archive', test: (b) => startsWith(b, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]) },
  { label: 'a RAR archive', test: (b) => startsWith(b, ascii('Rar!\x1a\x07')) },
  { label: 'an ELF executable', test: (b) => startsWith(b, [0x7f, 0x45, 0x4c, 0x46]) },
  { label: 'a Windows executable', test: (b) => startsWith(b, ascii('MZ')) && b.length >= 64 && b.subarray(0, 64).includes(0) },
  {
    label: 'a Mach-O executable',
    test: (b) =>
      [
        [0xfe, 0xed, 0xfa, 0xce],
        [0xfe, 0xed, 0xfa, 0xcf],
        [0xce, 0xfa, 0xed, 0xfe],
        [0xcf, 0xfa, 0xed, 0xfe],
      ].some((m) => startsWith(b, m)),
  },
  { label: 'a Java class file', test: (b) => startsWith(b, [0xca, 0xfe, 0xba, 0xbe]) },
  { label: 'a WebAssembly module', test: (b) => startsWith(b, [0x00, 0x61, 0x73, 0x6d]) },
  { label: 'an SQLite database', test: (b) => startsWith(b, ascii('SQLite format 3\0')) },
  { label: 'a legacy Office (.doc/.xls/.ppt) file; save it as .docx', test: (b) => startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) },
  { label: 'an RTF document; save it as .docx or plain text', test: (b) => startsWith(b, ascii('{\\rtf')) },
  { label: 'an Ogg media file', test: (b) => startsWith(b, ascii('OggS')) },
  { label: 'an MP3 audio file', test: (b) => startsWith(b, ascii('ID3')) },
  { label: 'an MP4/QuickTime media file', test: (b) => startsWith(b, ascii('ftyp'), 4) },
  { label: 'a FLAC audio file', test: (b) => startsWith(b, ascii('fLaC')) },
  { label: 'a Matroska/WebM media file', test: (b) => startsWith(b, [0x1a, 0x45, 0xdf, 0xa3]) },
];

/** Lower-cased MIME type without parameters, or '' when absent. */
function essence(mime: string | undefined): string {
  if (!mime) return '';
  return mime.split(';', 1)[0]!.trim().toLowerCase();
}

function extensionOf(filename: string): string {
  const base = filename.split(/[/\\]/).pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

function mimeKind(mime: string): DocumentKind | undefined {
  const k = MIME_KIND[mime];
  if (k) return k;
  if (mime.endsWith('+json')) return 'json';
  return undefined;
}

const PDF_MAGIC = ascii('%PDF-');
/** Offset of "%PDF-" in the first 1 KiB, or -1. */
function findPdfHeader(b: Uint8Array): number {
  const limit = Math.min(b.length - PDF_MAGIC.length, 1024);
  for (let i = 0; i <= limit; i++) {
    if (b[i] === 0x25 && startsWith(b, PDF_MAGIC, i)) return i;
  }
  return -1;
}

/** Offset of the first byte that is not ASCII whitespace or a UTF-8 BOM. */
function contentStart(b: Uint8Array): number {
  let i = startsWith(b, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x0c)) i++;
  return i;
}

const ZIP_LOCAL = [0x50, 0x4b, 0x03, 0x04];
const ZIP_EMPTY = [0x50, 0x4b, 0x05, 0x06];
const ZIP_SPANNED = [0x50, 0x4b, 0x07, 0x08];
const DOCX_MAIN = 'word/document.xml';
const latin1 = new TextDecoder('latin1');

/** Entry names from the ZIP central directory, or undefined when it cannot be read (truncated file). */
export function zipEntryNames(b: Uint8Array): string[] | undefined {
  return readZipDirectory(b)?.map((e) => e.name);
}

function bytesContainAscii(b: Uint8Array, needle: string): boolean {
  return latin1.decode(b).includes(needle);
}

type TextCheck = { ok: true; utf16: boolean } | { ok: false; reason: string };

function checkText(b: Uint8Array): TextCheck {
  if (startsWith(b, [0xff, 0xfe]) || startsWith(b, [0xfe, 0xff])) {
    // UTF-16 with a byte-order mark: validate by decoding the sniff window.
    const enc = b[0] === 0xff ? 'utf-16le' : 'utf-16be';
    try {
      new TextDecoder(enc, { fatal: true }).decode(b.subarray(0, Math.min(b.length, SNIFF_BYTES) & ~1), { stream: true });
      return { ok: true, utf16: true };
    } catch {
      return { ok: false, reason: 'is not a text file (invalid UTF-16)' };
    }
  }
  const head = b.subarray(0, Math.min(b.length, SNIFF_BYTES));
  if (head.includes(0)) return { ok: false, reason: 'is a binary file, not text' };
  try {
    // stream: true tolerates a multi-byte character cut at the end of the window.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: head.length < b.length });
  } catch {
    return { ok: false, reason: 'is not UTF-8 text (convert it to UTF-8, or upload a PDF or DOCX)' };
  }
  return { ok: true, utf16: false };
}

const HTML_SNIFF = /^(?:\s|<!--[\s\S]*?-->|<\?xml[^>]*>)*<(?:!doctype\s+html|html)[\s>]/i;

export function looksLikeHtml(text: string): boolean {
  return HTML_SNIFF.test(text.slice(0, 2048));
}

export function detectKind(bytes: Uint8Array, filename: string, declaredMime: string | undefined): { kind: DocumentKind; mimeType: string } {
  const name = sanitizeFilename(filename);
  const ext = extensionOf(filename);
  const mime = essence(declaredMime);
  const declared = mimeKind(mime);
  const byExt = EXTENSION_KIND[ext];
  const claims = (k: DocumentKind): boolean => declared === k || byExt === k;
  const result = (kind: DocumentKind) => ({ kind, mimeType: CANONICAL_MIME[kind] });
  const unsupported = (why: string): never => {
    throw new IngestError(
      'unsupported_type',
      filename,
      `"${name}" ${why}. Supported types: PDF, Word (.docx), Markdown, plain text, HTML, CSV, JSON and scanned images (PNG, JPEG, TIFF, WebP).`,
    );
  };

  // 1. PDF: the header must open the file (after whitespace) — or appear anywhere in the first
  //    KiB of a file that claims to be a PDF, since readers tolerate leading junk. A text file
  //    that merely mentions "%PDF-" near its start stays text.
  const pdfAt = findPdfHeader(bytes);
  if (pdfAt >= 0 && (pdfAt === contentStart(bytes) || claims('pdf'))) return result('pdf');

  // 2. ZIP containers
  if (startsWith(bytes, ZIP_LOCAL) || startsWith(bytes, ZIP_EMPTY) || startsWith(bytes, ZIP_SPANNED)) {
    const names = zipEntryNames(bytes);
    if (names) {
      if (names.includes(DOCX_MAIN)) return result('docx');
      if (names.includes('xl/workbook.xml')) unsupported('is an Excel workbook (.xlsx), which is not supported; export it as CSV');
      if (names.includes('ppt/presentation.xml')) unsupported('is a PowerPoint presentation (.pptx), which is not supported; export it as PDF');
      if (names.includes('mimetype') && bytesContainAscii(bytes.subarray(0, 200), 'opendocument'))
        unsupported('is an OpenDocument file, which is not supported; save it as .docx or PDF');
      if (claims('docx')) throw new IngestError('corrupt', filename, `"${name}" is not a valid Word document: the archive has no word/document.xml.`);
      unsupported('is a ZIP archive, not a document; upload the files inside it instead');
    }
    // Unreadable directory (e.g. truncated upload).
    if (bytesContainAscii(bytes, DOCX_MAIN) || claims('docx')) return result('docx');
    unsupported('is a ZIP archive, not a document; upload the files inside it instead');
  }

  // 3. Images read by OCR, unless named or declared as something else; other binary formats
  const image = IMAGE_MAGICS.find((m) => m.test(bytes));
  if (image) {
    const other = (k: DocumentKind | undefined): boolean => k !== undefined && !IMAGE_KINDS.has(k);
    if (!other(declared) && !other(byExt)) return result(image.kind);
    unsupported(`is ${image.label} named or declared as another type; give it its image extension to have its text read by OCR`);
  }
  for (const m of BINARY_MAGICS) {
    if (m.test(bytes)) unsupported(`is ${m.label}, not a supported document`);
  }

  // 4./5. Must be text from here on.
  const text = checkText(bytes);
  if (claims('pdf')) {
    throw new IngestError('corrupt', filename, `"${name}" is not a valid PDF file (no PDF header found); it may be damaged or mislabelled.`);
  }
  if (claims('docx')) {
    throw new IngestError('corrupt', filename, `"${name}" is not a valid Word (.docx) document; it may be damaged or mislabelled.`);
  }
  const claimedImage = [declared, byExt].find((k) => k !== undefined && IMAGE_KINDS.has(k));
  if (claimedImage) {
    throw new IngestError('corrupt', filename, `"${name}" is not a valid ${claimedImage.toUpperCase()} image; it may be damaged or mislabelled.`);
  }
  if (!text.ok) unsupported(text.reason);

  // 6. Text family
  const kind: DocumentKind = declared ?? byExt ?? 'text';
  if (kind !== 'json' && kind !== 'csv' && kind !== 'html') {
    const head = text.ok && text.utf16 ? '' : latin1.decode(bytes.subarray(0, 2048));
    if (head && looksLikeHtml(head.replace(/^\xef\xbb\xbf/, ''))) return result('html');
  }
  return result(kind);
}
