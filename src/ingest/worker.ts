/**
 * Worker-thread entry of the ingestion pool (pool.ts): runs ingestDocument for each job it is
 * sent and answers with the document or the error. Everything that parses untrusted documents
 * runs here, under the pool's memory limit and wall-clock timeout, never on the server's
 * event loop.
 */
import { parentPort } from 'node:worker_threads';
import { IngestError } from './errors.js';
import { ingestDocument, type OcrProgress } from './pipeline.js';
import type { JobOcr, JobRequest, JobResult } from './protocol.js';

const port = parentPort;
if (!port) throw new Error('src/ingest/worker.ts runs only as a worker thread');

port.on('message', (job: JobRequest) => {
  void run(job).then((result) => port.postMessage(result));
});
// Static imports are loaded by now: the pool starts a job's clock from here.
port.postMessage('ready');

async function run(job: JobRequest): Promise<JobResult> {
  try {
    const onOcr = (ocr: OcrProgress): void => port!.postMessage({ id: job.id, ocr } satisfies JobOcr);
    const { text: _text, processed: _processed, ...doc } = await ingestDocument(job.bytes, job.filename, job.declaredMime, { ...job.options, onOcr });
    return { id: job.id, ok: true, doc };
  } catch (err) {
    if (err instanceof IngestError) {
      return { id: job.id, ok: false, error: { ingest: true, kind: err.kind, filename: err.filename, message: err.message } };
    }
    const e = err instanceof Error ? err : new Error(String(err));
    return { id: job.id, ok: false, error: { ingest: false, name: e.name, message: e.message, stack: e.stack ?? '' } };
  }
}
