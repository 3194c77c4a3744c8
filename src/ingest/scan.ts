/**
 * Scans: text read by OCR (ocr.ts) from an image file, or from a PDF page without a text layer
 * rendered to an image (PDF.js through unpdf, drawing on @napi-rs/canvas, a prebuilt Skia that
 * npm installs). Caps: an image file over limits.maxOcrPixels is refused from its header before
 * anything decodes it; a PDF page is rendered at OCR_DPI, or smaller when that would pass the same
 * pixel cap, so no page is refused for its size. The number of pages read by OCR is capped in
 * pdf.ts, the time in pool.ts.
 */
import type { PDFPageProxy } from 'unpdf/pdfjs';
import { IngestError } from './errors.js';
import { imageSize, type ImageFormat } from './image.js';
import { overLimit, type IngestLimits } from './limits.js';
import { recognize } from './ocr.js';

/** Resolution a PDF page is rendered at for OCR (Tesseract reads body text best at about 300 dpi). */
export const OCR_DPI = 300;

/** Text of an image file. */
export async function ocrImage(
  bytes: Uint8Array,
  format: ImageFormat,
  filename: string,
  name: string,
  limits: Pick<IngestLimits, 'maxOcrPixels'>,
): Promise<string> {
  const size = imageSize(bytes, format);
  if (!size) throw new IngestError('corrupt', filename, `"${name}" is not a readable ${format.toUpperCase()} image; it may be damaged or truncated.`);
  const pixels = size.width * size.height;
  if (pixels > limits.maxOcrPixels) {
    throw overLimit(filename, `is ${size.width} × ${size.height} px`, `${limits.maxOcrPixels} px per image`, 'maxOcrPixels');
  }
  try {
    return await recognize(bytes);
  } catch (err) {
    throw new IngestError('corrupt', filename, `"${name}" could not be read as an image; it may be damaged or truncated.`, { cause: err });
  }
}

type CanvasFactoryClass = Awaited<ReturnType<typeof import('unpdf').createIsomorphicCanvasFactory>>;
let canvasFactory: Promise<CanvasFactoryClass> | null = null;

/** PDF.js's canvas factory over @napi-rs/canvas (loaded once per worker, on the first scanned page). */
export function pdfCanvasFactory(): Promise<CanvasFactoryClass> {
  canvasFactory ??= import('unpdf').then(({ createIsomorphicCanvasFactory }) => createIsomorphicCanvasFactory(() => import('@napi-rs/canvas')));
  return canvasFactory;
}

/** The scale a page of `width` × `height` points is rendered at: OCR_DPI, less if that passes `maxPixels`. */
export function renderScale(width: number, height: number, maxPixels: number): number {
  const scale = OCR_DPI / 72;
  const fit = Math.sqrt(maxPixels / Math.max(1, width * height));
  return Math.min(scale, fit);
}

/** Render one PDF page to a PNG and read it. */
export async function ocrPdfPage(page: PDFPageProxy, limits: Pick<IngestLimits, 'maxOcrPixels'>): Promise<string> {
  const Factory = await pdfCanvasFactory();
  const base = page.getViewport({ scale: 1 });
  const viewport = page.getViewport({ scale: renderScale(base.width, base.height, limits.maxOcrPixels) });
  const factory = new Factory();
  const drawing = factory.create(Math.max(1, Math.floor(viewport.width)), Math.max(1, Math.floor(viewport.height)));
  try {
    await page.render({ canvas: drawing.canvas as never, canvasContext: drawing.context as never, viewport }).promise;
    const canvas = drawing.canvas as unknown as { encode(format: 'png'): Promise<Buffer> };
    const png = await canvas.encode('png');
    return await recognize(png);
  } finally {
    factory.destroy(drawing);
  }
}
