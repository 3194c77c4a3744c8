/**
 * Worker-thread entry of the image pool (pool.ts): decodes each job's base64, reads the image
 * (inspect.ts) and answers with its facts and canonical base64, or why it was refused. Untrusted image bytes
 * are only ever read here, never on the server's event loop.
 */
import { parentPort } from 'node:worker_threads';
import { inspectImage } from './inspect.js';
import { ImageError } from './types.js';
import type { ImageJob, ImageJobResult } from './protocol.js';

const port = parentPort;
if (!port) throw new Error('src/media/worker.ts runs only as a worker thread');

/** Standard base64 (whitespace allowed between groups, padding optional): what Buffer.from would silently skip is refused. */
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

port.on('message', (job: ImageJob) => {
  port.postMessage(run(job));
});
port.postMessage('ready');

function run(job: ImageJob): ImageJobResult {
  try {
    let bytes: Uint8Array;
    if (typeof job.data === 'string') {
      // 4 base64 characters per 3 bytes: a text that cannot fit the limit is refused before it is decoded.
      if (job.data.length > Math.ceil(job.limits.maxBytes / 3) * 4 + 1024)
        throw new ImageError('too_large', `An image may have at most ${job.limits.maxBytes} bytes`);
      if (!BASE64.test(job.data)) throw new ImageError('corrupt', 'The image data is not base64');
      bytes = new Uint8Array(Buffer.from(job.data, 'base64'));
    } else bytes = job.data;
    const info = inspectImage(bytes, job.limits);
    return { id: job.id, ok: true, info, base64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') };
  } catch (err) {
    if (err instanceof ImageError) return { id: job.id, ok: false, kind: err.kind, message: err.message };
    return { id: job.id, ok: false, kind: 'corrupt', message: 'The image could not be read' };
  }
}
