/**
 * PDF → text: unpdf's PDF.js, one page at a time (PDF.js would otherwise hold every page of a
 * 50,000-page file at once), then merged like unpdf's mergePages (pages joined by a line break,
 * spaces collapsed, at most one blank line) after removing running headers/footers and page
 * numbers (mergePdfPages). Refuses a PDF with more pages than limits.maxPdfPages before reading
 * any page, and stops reading once the text passes limits.maxChars. Runs on a copy of the bytes
 * (PDF.js transfers/detaches the buffer it is given), with a time limit. A page without a text
 * layer (no visible character) is a scan: it is rendered and read by OCR (scan.ts), at most
 * limits.maxOcrPages of them per file.
 */
import { getResolvedPDFJS } from 'unpdf';
import { IngestError } from './errors.js';
import type { OcrProgress } from './extract.js';
import { overLimit, type IngestLimits } from './limits.js';
import { hasVisibleText } from './normalise.js';
import { ocrPdfPage, pdfCanvasFactory } from './scan.js';

interface TextItemLike {
  str?: string;
  hasEOL?: boolean;
}

class Timeout extends Error {}

export async function extractPdf(
  bytes: Uint8Array,
  filename: string,
  name: string,
  timeoutMs: number,
  limits: Pick<IngestLimits, 'maxPdfPages' | 'maxChars' | 'maxOcrPages' | 'maxOcrPixels'>,
  onOcr: (progress: OcrProgress) => void = () => undefined,
): Promise<string> {
  const { getDocument } = await getResolvedPDFJS();
  // PDF.js draws a scanned page (and its masks and patterns) on canvases this factory makes
  const CanvasFactory = await pdfCanvasFactory();
  let task: ReturnType<typeof getDocument>;
  try {
    // PDF.js takes ownership of (detaches) the buffer it is given, and refuses a Buffer: always
    // pass a plain Uint8Array copy (Buffer#slice would be a view, not a copy).
    task = getDocument({
      data: new Uint8Array(bytes),
      isEvalSupported: false,
      useSystemFonts: true,
      disableFontFace: true,
      verbosity: 0,
      CanvasFactory,
      // an image of a page larger than an image file may be is not decoded (its page renders without it)
      maxImageSize: limits.maxOcrPixels,
    });
  } catch (err) {
    throw new IngestError('corrupt', filename, `"${name}" is not a readable PDF; it may be damaged or truncated.`, { cause: err });
  }
  // A rejection of task.promise after we gave up must not become an unhandled rejection.
  task.promise.catch(() => undefined);
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(`timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  expired.catch(() => undefined);
  let pdf: Awaited<typeof task.promise> | undefined;
  try {
    pdf = await Promise.race([task.promise, expired]);
    if (pdf.numPages > limits.maxPdfPages) {
      throw overLimit(filename, `has ${pdf.numPages} pages`, `${limits.maxPdfPages} pages per PDF`, 'maxPdfPages');
    }
    const pages: string[] = [];
    let chars = 0;
    let scanned = 0;
    for (let n = 1; n <= pdf.numPages; n++) {
      if (Date.now() > deadline) throw new Timeout(`timed out after ${timeoutMs} ms`);
      const page = await Promise.race([pdf.getPage(n), expired]);
      const content = await Promise.race([page.getTextContent(), expired]);
      let text = '';
      for (const item of content.items as TextItemLike[]) {
        if (item.str != null) text += item.str + (item.hasEOL ? '\n' : '');
      }
      if (!hasVisibleText(text)) {
        if (++scanned > limits.maxOcrPages) {
          throw overLimit(
            filename,
            `has more than ${limits.maxOcrPages} pages without a text layer`,
            `${limits.maxOcrPages} pages read by OCR per file`,
            'maxOcrPages',
          );
        }
        onOcr({ pages: pdf.numPages, pagesRead: n - 1 });
        text = await Promise.race([ocrPdfPage(page, limits), expired]);
        onOcr({ pages: pdf.numPages, pagesRead: n });
      }
      page.cleanup();
      chars += text.length;
      if (chars > limits.maxChars) {
        throw overLimit(
          filename,
          `holds more than ${limits.maxChars} characters of text (reached on page ${n})`,
          `${limits.maxChars} characters per file`,
          'maxChars',
        );
      }
      pages.push(text);
    }
    return mergePdfPages(pages);
  } catch (err) {
    if (err instanceof IngestError) throw err;
    const errName = err instanceof Error ? err.name : '';
    if (errName === 'PasswordException') {
      throw new IngestError('corrupt', filename, `"${name}" is password-protected; remove the password and upload it again.`, { cause: err });
    }
    if (err instanceof Timeout) {
      throw new IngestError('corrupt', filename, `"${name}" could not be read: reading the PDF took too long.`, { cause: err });
    }
    throw new IngestError('corrupt', filename, `"${name}" is not a readable PDF; it may be damaged or truncated.`, { cause: err });
  } finally {
    clearTimeout(timer);
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
 * When the repeated lines are all the text there is (a one-line notice on every page), they
 * are the document, not its furniture: then only page numbers are dropped.
 */
export function mergePdfPages(pages: string | string[]): string {
  const list = typeof pages === 'string' ? [pages] : pages;
  const pageLines = list.map((p) =>
    p
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0),
  );
  const key = (l: string): string => l.replace(/\d+/g, '#').toLowerCase();
  const counts = new Map<string, number>();
  for (const lines of pageLines) {
    const edge = new Set<string>();
    for (let i = 0; i < Math.min(EDGE_LINES, lines.length); i++) edge.add(key(lines[i]!));
    for (let i = Math.max(0, lines.length - EDGE_LINES); i < lines.length; i++) edge.add(key(lines[i]!));
    for (const k of edge) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const threshold = pageLines.length >= 3 ? Math.max(3, Math.ceil(pageLines.length / 2)) : Infinity;
  const pageNumber = (l: string): boolean => PAGE_NUMBER.test(l);
  const repeated = (l: string): boolean => pageNumber(l) || (counts.get(key(l)) ?? 0) >= threshold;
  const strip = (furniture: (l: string) => boolean): string[] =>
    pageLines.map((lines, page) => {
      let a = 0;
      let b = lines.length;
      // A running header on the first page is usually the document title: keep it there.
      const top = page === 0 ? pageNumber : furniture;
      while (a < Math.min(EDGE_LINES, b) && top(lines[a]!)) a++;
      while (b > a && b > lines.length - EDGE_LINES && furniture(lines[b - 1]!)) b--;
      return lines.slice(a, b).join('\n');
    });
  let kept = strip(repeated);
  if (!kept.some((p) => /\S/.test(p))) kept = strip(pageNumber);
  return kept
    .filter((p) => p.length > 0)
    .join('\n')
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n');
}
