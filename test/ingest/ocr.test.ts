/**
 * OCR in the ingestion pipeline, in process: generated scans (images and PDFs without a text layer)
 * are read by Tesseract from the English data of the npm package; caps on pixels and OCR pages.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { detectKind, IngestError } from '../../src/ingest/index.js';
import { imageSize } from '../../src/ingest/image.js';
import { stopOcr, tesseractOptions } from '../../src/ingest/ocr.js';
import { ingestDocument } from '../../src/ingest/pipeline.js';
import { renderScale } from '../../src/ingest/scan.js';
import { pdfWithClaimedImage, pngHeader, scanPdf, textImage, textTiff, tiff } from './scans.js';

// Starting Tesseract and reading pages takes seconds on a busy 2-core machine (no timing is asserted).
vi.setConfig({ testTimeout: 120_000 });
afterAll(() => stopOcr());

async function refusal(run: () => Promise<unknown>): Promise<IngestError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(IngestError);
    return err as IngestError;
  }
  throw new Error('expected an IngestError');
}

const words = (s: string): string => s.replace(/\s+/g, ' ').trim();

describe('the English data comes from the npm package, never from the network', () => {
  it('starts Tesseract on a local folder holding eng.traineddata.gz, with no cache to read or write', () => {
    const options = tesseractOptions();
    expect(path.isAbsolute(options.langPath)).toBe(true);
    expect(options.langPath).not.toMatch(/^[a-z][a-z0-9+.-]*:/i); // a path, not a URL: tesseract.js reads it from disk
    expect(options.langPath.split(path.sep)).toEqual(expect.arrayContaining(['node_modules', '@tesseract.js-data', 'eng']));
    expect(statSync(path.join(options.langPath, 'eng.traineddata.gz')).size).toBeGreaterThan(1_000_000);
    expect(options.cacheMethod).toBe('none');
  });

  it('leaves no cached traineddata in the working directory after reading a page', async () => {
    const before = readdirSync(process.cwd()).filter((f) => f.endsWith('.traineddata'));
    const doc = await ingestDocument(textImage(['Nothing is downloaded while reading this line.']), 'line.png');
    expect(words(doc.processed)).toBe('Nothing is downloaded while reading this line.');
    expect(readdirSync(process.cwd()).filter((f) => f.endsWith('.traineddata'))).toEqual(before);
    expect(existsSync(path.join(process.cwd(), 'eng.traineddata'))).toBe(false);
  });
});

describe('image files are read by OCR', () => {
  const sentence = 'The harbour master logged eleven ships before dawn.';
  it.each([
    ['scan.png', () => textImage([sentence], 'png'), 'image/png'],
    ['scan.jpg', () => textImage([sentence], 'jpeg'), 'image/jpeg'],
    ['scan.webp', () => textImage([sentence], 'webp'), 'image/webp'],
    ['scan.tiff', () => textTiff([sentence]), 'image/tiff'],
  ])('%s', async (name, make, mimeType) => {
    const doc = await ingestDocument(make(), name);
    expect(doc).toMatchObject({ mimeType, ocr: true });
    expect(words(doc.processed)).toBe(sentence);
    expect(doc.chunks.length).toBe(1);
  });

  it('are known by their bytes when the name says nothing, and refused when named as text', async () => {
    expect(detectKind(textImage(['x']), 'upload', 'application/octet-stream')).toEqual({ kind: 'png', mimeType: 'image/png' });
    expect(detectKind(textImage(['x'], 'jpeg'), 'photo.bin', 'image/jpeg')).toEqual({ kind: 'jpeg', mimeType: 'image/jpeg' });
    const named = await refusal(async () => detectKind(textImage(['x']), 'notes.txt', 'text/plain'));
    expect(named.kind).toBe('unsupported_type');
    expect(named.message).toMatch(/"notes.txt" is a PNG image named or declared as another type/);
    const fake = await refusal(async () => detectKind(Buffer.from('just text'), 'scan.png', 'image/png'));
    expect(fake.kind).toBe('corrupt');
    expect(fake.message).toBe('"scan.png" is not a valid PNG image; it may be damaged or mislabelled.');
  });

  it('sizes are read from each header; a truncated header is no size', () => {
    expect(imageSize(textImage(['x'], 'png', 640), 'png')).toEqual({ width: 640, height: 184 });
    expect(imageSize(textImage(['x'], 'jpeg', 640), 'jpeg')).toEqual({ width: 640, height: 184 });
    expect(imageSize(textImage(['x'], 'webp', 640), 'webp')).toEqual({ width: 640, height: 184 });
    expect(imageSize(textTiff(['x'], 640), 'tiff')).toEqual({ width: 640, height: 184 });
    expect(imageSize(pngHeader(100_000, 100_000), 'png')).toEqual({ width: 100_000, height: 100_000 });
    expect(imageSize(pngHeader(10, 10).subarray(0, 20), 'png')).toBeUndefined();
    expect(imageSize(textImage(['x'], 'jpeg').subarray(0, 40), 'jpeg')).toBeUndefined();
  });

  it('an image over INGEST_OCR_MAX_PIXELS is refused from its header (413), before any decoding', async () => {
    const png = await refusal(() => ingestDocument(pngHeader(100_000, 100_000), 'huge.png'));
    expect(png.kind).toBe('too_large');
    expect(png.httpStatus).toBe(413);
    expect(png.message).toBe('"huge.png" is 100000 × 100000 px; the limit is 40000000 px per image (INGEST_OCR_MAX_PIXELS).');
    const small = await refusal(() => ingestDocument(tiff(3000, 2000, Buffer.alloc(0)), 'page.tif', undefined, { limits: { maxOcrPixels: 5_000_000 } }));
    expect(small.message).toMatch(/"page.tif" is 3000 × 2000 px; the limit is 5000000 px per image \(INGEST_OCR_MAX_PIXELS\)/);
  });

  it('a damaged image is a 400 naming the file; one without text says OCR found none', async () => {
    const truncated = await refusal(() => ingestDocument(Buffer.concat([pngHeader(200, 100), Buffer.alloc(64)]), 'torn.png'));
    expect(truncated.kind).toBe('corrupt');
    expect(truncated.message).toMatch(/^"torn.png" could not be read as an image/);
    const blank = await refusal(() => ingestDocument(textImage([], 'png', 400), 'blank.png'));
    expect(blank.kind).toBe('corrupt');
    expect(blank.message).toBe('"blank.png" contains no text (OCR found none in it).');
  });
});

describe('PDF pages without a text layer are rendered and read by OCR', () => {
  it('a scanned PDF yields its sentences, page by page', async () => {
    const pdf = scanPdf([['The lighthouse keeper counted ninety gulls.'], ['Copper kettles hang above the stove.']]);
    const doc = await ingestDocument(pdf, 'scan.pdf');
    expect(doc).toMatchObject({ kind: 'pdf', mimeType: 'application/pdf', ocr: true });
    expect(doc.processed.split('\n').map(words)).toEqual(['The lighthouse keeper counted ninety gulls.', 'Copper kettles hang above the stove.']);
  });

  it('only the pages without text are read by OCR; a PDF with a text layer throughout is not', async () => {
    const mixed = await ingestDocument(scanPdf([{ text: ['Typed introduction about orchards.'] }, ['Scanned appendix about quarries.']]), 'mixed.pdf');
    expect(mixed.ocr).toBe(true);
    expect(mixed.processed).toContain('Typed introduction about orchards.');
    expect(words(mixed.processed)).toContain('Scanned appendix about quarries.');
    const typed = await ingestDocument(readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'shared-mime-info-spec.pdf')), 'spec.pdf');
    expect(typed.ocr).toBe(false);
  });

  it('more pages without a text layer than INGEST_OCR_MAX_PAGES → 413 before the one past the cap is read', async () => {
    const pdf = scanPdf([['one'], { text: ['typed'] }, ['two'], ['three']]);
    const err = await refusal(() => ingestDocument(pdf, 'thick.pdf', undefined, { limits: { maxOcrPages: 2 } }));
    expect(err.kind).toBe('too_large');
    expect(err.message).toBe('"thick.pdf" has more than 2 pages without a text layer; the limit is 2 pages read by OCR per file (INGEST_OCR_MAX_PAGES).');
  });

  it('an image in a page claiming more pixels than INGEST_OCR_MAX_PIXELS is not decoded: the page reads as empty', async () => {
    // 30,000 × 30,000 px would be 3.6 GB of RGBA to decode and draw
    const err = await refusal(() => ingestDocument(pdfWithClaimedImage(30_000, 30_000), 'claims.pdf'));
    expect(err.kind).toBe('corrupt');
    expect(err.message).toBe('"claims.pdf" contains no text (OCR found none in it).');
  });

  it('a page is rendered at 300 dpi, or smaller when that would pass the pixel cap', () => {
    expect(renderScale(612, 792, 40_000_000)).toBeCloseTo(300 / 72);
    const poster = renderScale(14_400, 14_400, 40_000_000);
    expect(poster).toBeLessThan(300 / 72);
    expect(14_400 * poster * 14_400 * poster).toBeCloseTo(40_000_000, -3);
  });
});
