/**
 * The event loop is never held for seconds while a large upload is read and stored, nor while
 * a search of it builds the in-memory lexical index.
 *
 * The embedded database as `npm start` runs it (on disk, on its own thread), or PostgreSQL when
 * the suite is given one. A DOCX of a few dozen kilobytes that holds megabytes of text (thousands
 * of chunks, the shape of the largest file the ingestion caps accept) is uploaded while
 * perf_hooks.monitorEventLoopDelay watches the loop; then questions are asked of the entry until
 * its index is built. The bound is generous (2 s): a guard against holding the loop — a statement
 * run synchronously on the app's thread over the whole upload held it for tens of seconds — not a
 * timed benchmark (bench/event-loop.ts measures it).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, multipartBody } from '../helpers/api.js';
import { newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { docx, DOCX_MIME, para } from '../ingest/hostile-files.js';

/** Held for this long, a server is unresponsive, whatever the machine's load. */
const HELD_MS = 2000;

let t: TestApp;
let team: TeamFixture;
beforeAll(async () => {
  const onDisk = process.env.ATRIUM_TEST_DATABASE_URL
    ? {}
    : { databaseUrl: null, dataDir: mkdtempSync(path.join(tmpdir(), 'atrium-loop-')), embeddedDbThread: true };
  t = await startTestApp(onDisk);
  team = await newTeam(t);
}, 120_000);
afterAll(async () => {
  await t.close();
});

/** ~`bytes` of words of 500 kinds in one DOCX (it deflates to ~1 % of that). */
function denseDocx(bytes: number): Promise<Buffer> {
  const words = Array.from({ length: Math.ceil(bytes / 5) }, (_, i) => `w${(i * 7919) % 500}`).join(' ');
  const per = 60_000;
  return docx(Array.from({ length: Math.ceil(words.length / per) }, (_, i) => para(words.slice(i * per, (i + 1) * per))).join(''));
}

describe('the event loop', () => {
  it(`is not held for ${HELD_MS / 1000} s while a large DOCX is stored and its entry indexed`, async () => {
    const file = await denseDocx(4_000_000);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const api = t.api(team.ownerKey);
    const upload = multipartBody([
      { name: 'title', value: 'dense' },
      { name: 'files', filename: 'dense.docx', contentType: DOCX_MIME, data: file },
    ]);
    const entry = expectStatus(await api.POST('/api/v1/plus', upload), 200);
    expect(entry.files[0]!.fileChunks!.length).toBeGreaterThan(1000);
    // the first question queues the entry's index build; the next ones run while it is built
    for (let i = 0; i < 3; i++) {
      const q = await api.POST('/api/v1/plus/{plusId}/context-for-prompt', { params: { path: { plusId: entry.id } }, body: { content: `w${i * 7} w42` } });
      expect(q.response.status).toBe(200);
    }
    await t.services.plus.lexicalIndexes?.idle();
    loop.disable();
    expect(loop.count).toBeGreaterThan(10);
    expect(loop.max / 1e6).toBeLessThan(HELD_MS);
  }, 600_000);
});
