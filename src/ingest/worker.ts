/**
 * Worker-thread entry of the ingestion pool (pool.ts): runs ingestDocument for each job it is
 * sent and answers with the document or the error. Everything that parses untrusted documents
 * runs here, under the pool's memory limit and wall-clock timeout, never on the server's
 * event loop.
 */
import { parentPort } from 'node:worker_threads';
import { IngestError } from './errors.js';
import { packChunks } from './packed-chunks.js';
import { ingestDocument, type OcrProgress } from './pipeline.js';
import type { JobOcr, JobRequest, JobResult } from './protocol.js';

const port = parentPort;
if (!port) throw new Error('src/ingest/worker.ts runs only as a worker thread');

port.on('message', (job: JobRequest) => {
  void run(job).then(({ result, transfer }) => port.postMessage(result, transfer));
});
// Static imports are loaded by now: the pool starts a job's clock from here.
port.postMessage('ready');

async function run(job: JobRequest): Promise<{ result: JobResult; transfer: ArrayBuffer[] }> {
  try {
    const onOcr = (ocr: OcrProgress): void => port!.postMessage({ id: job.id, ocr } satisfies JobOcr);
    const { text: _text, processed: _processed, chunks, ...doc } = await ingestDocument(job.bytes, job.filename, job.declaredMime, { ...job.options, onOcr });
    const { packed, transfer } = packChunks(chunks);
    return { result: { id: job.id, ok: true, doc: { ...doc, chunks: packed } }, transfer };
  } catch (err) {
    if (err instanceof IngestError) {
      return { result: { id: job.id, ok: false, error: { ingest: true, kind: err.kind, filename: err.filename, message: err.message } }, transfer: [] };
    }
    const e = err instanceof Error ? err : new Error(String(err));
    return { result: { id: job.id, ok: false, error: { ingest: false, name: e.name, message: e.message, stack: e.stack ?? '' } }, transfer: [] };
  }
}
