/**
 * OCR with Tesseract (tesseract.js, LSTM engine) and its English data from the npm package
 * @tesseract.js-data/eng, read from node_modules: `langPath` is that package's folder (a local
 * path, so tesseract.js reads the file and never fetches), and `cacheMethod: 'none'` keeps it from
 * looking for or writing a cached copy in the working directory. tesseract.js runs the recognizer
 * in a worker thread of its own, started by (and ending with) the ingestion worker that uses it.
 *
 * Loaded only inside ingestion workers (through pdf.ts and extract.ts), like every parser.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { createWorker, OEM, type Worker as TesseractWorker } from 'tesseract.js';

const require = createRequire(import.meta.url);

/** The English LSTM model shipped by @tesseract.js-data/eng (`4.0.0_best_int/eng.traineddata.gz`). */
export function englishDataPath(): string {
  return path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

/** The options tesseract.js is started with (a test checks they point at local files only). */
export function tesseractOptions() {
  return { langPath: englishDataPath(), gzip: true, cacheMethod: 'none', logger: () => undefined, errorHandler: () => undefined } as const;
}

let engine: Promise<TesseractWorker> | null = null;

function start(): Promise<TesseractWorker> {
  engine ??= createWorker('eng', OEM.LSTM_ONLY, tesseractOptions()).catch((err: unknown) => {
    engine = null;
    throw err;
  });
  return engine;
}

/**
 * The text Tesseract reads in an encoded image (PNG, JPEG, TIFF or WebP; Leptonica decodes it in
 * Tesseract's worker). The engine is started on first use and kept for the next page or file.
 */
export async function recognize(image: Uint8Array): Promise<string> {
  const worker = await start();
  const { data } = await worker.recognize(Buffer.from(image.buffer, image.byteOffset, image.byteLength));
  return data.text;
}

/** Stop Tesseract's worker (tests; an ingestion worker's own end stops it too). */
export async function stopOcr(): Promise<void> {
  const running = engine;
  engine = null;
  if (running) await (await running.catch(() => null))?.terminate();
}
