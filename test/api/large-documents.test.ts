/**
 * A large document neither holds the event loop nor answers differently.
 *
 * - The embedded database as `npm start` runs it (on disk, on its own thread): while a document of
 *   several megabytes is stored and its answer written, the event loop keeps turning. The bound is
 *   relative, not a time: no gap between two turns of a 5 ms heartbeat may take a quarter of the
 *   whole upload (with PGlite on the app's thread the upload's transaction was one gap). On
 *   PostgreSQL the same test runs against the server.
 * - The answer of such an entry is written in pieces (modules/plus/answer.ts) and reads back as
 *   the same JSON as a small entry's: the same fields, every chunk, compressed when asked.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { expectStatus, multipartBody } from '../helpers/api.js';

let t: TestApp;
let team: TeamFixture;
/** the large entry's upload, stored by the first test */
let saved: Awaited<ReturnType<typeof upload>>;
beforeAll(async () => {
  const onDisk = process.env.ATRIUM_TEST_DATABASE_URL
    ? {}
    : { databaseUrl: null, dataDir: mkdtempSync(path.join(tmpdir(), 'atrium-large-')), embeddedDbThread: process.env.ATRIUM_TEST_EMBEDDED !== 'app-thread' };
  t = await startTestApp({ ...onDisk, upload: { maxFileBytes: 20_000_000, maxRequestBytes: 20_000_000, maxFiles: 2 } });
  team = await newTeam(t);
}, 120_000);
afterAll(async () => {
  await t.close();
});

/** Prose of `n` paragraphs whose words vary, so chunks differ. */
function prose(n: number): string {
  const words = ['harbour', 'ledger', 'orchard', 'quarry', 'lantern', 'meadow', 'copper', 'timber', 'granary', 'tidewater'];
  return Array.from(
    { length: n },
    (_, i) =>
      `Paragraph ${i}: the ${words[i % 10]} report of year ${1700 + (i % 300)} counts ${(i * 37) % 1000} ${words[(i * 7) % 10]} carts and ${words[(i * 3) % 10]} barrels.`,
  ).join('\n\n');
}

function upload(title: string, text: string) {
  const body = multipartBody([
    { name: 'title', value: title },
    { name: 'isPublic', value: 'true' },
    { name: 'files', filename: `${title}.txt`, contentType: 'text/plain', data: Buffer.from(text) },
  ]);
  return t.api(team.ownerKey).POST('/api/v1/plus', body);
}

describe('a large document', () => {
  it('is stored while the event loop keeps turning', async () => {
    const text = prose(15_000); // ~1.5 MB, its chunks' text over a megabyte (counted twice in the answer)
    const gaps: number[] = [];
    let last = performance.now();
    const heartbeat = setInterval(() => {
      const now = performance.now();
      gaps.push(now - last);
      last = now;
    }, 5);
    const started = performance.now();
    saved = await upload('large-ledger', text);
    const took = performance.now() - started;
    clearInterval(heartbeat);
    expectStatus(saved, 200);
    expect(gaps.length).toBeGreaterThan(10);
    expect(Math.max(...gaps)).toBeLessThan(took / 4);
  }, 300_000);

  it('answers the same JSON as a small one, every chunk, written in pieces', async () => {
    expect(saved?.response.status).toBe(200);
    const entry = expectStatus(saved, 200);
    const smallEntry = expectStatus(await upload('small-ledger', prose(20)), 200);
    expect(saved.response.headers.get('content-type')).toMatch(/^application\/json/);
    const smallFile = smallEntry.files[0]!;
    const file = entry.files[0]!;
    expect(Object.keys(entry).sort()).toEqual(Object.keys(smallEntry).sort());
    expect(Object.keys(file).sort()).toEqual(Object.keys(smallFile).sort());
    expect(Object.keys(file.fileChunks[0]!).sort()).toEqual(Object.keys(smallFile.fileChunks[0]!).sort());
    expect(file.fileChunks.length).toBeGreaterThan(200);
    expect(file.fileChunks.map((c) => c.id)).toEqual([...file.fileChunks.map((c) => c.id)].sort((a, b) => a - b));
    const joined = file.fileChunks.map((c) => c.fileData).join(' ');
    for (const probe of ['Paragraph 0:', 'Paragraph 7000:', 'Paragraph 14999:']) expect(joined).toContain(probe);

    const api = t.api(team.ownerKey);
    const at = { params: { path: { plusId: entry.id } } };
    expect(expectStatus(await api.GET('/api/v1/plus/{plusId}', at), 200)).toEqual(entry);
    // the bytes as sent: the in-process fetch hands them over compressed
    const gz = await api.GET('/api/v1/plus/{plusId}', { ...at, headers: { 'accept-encoding': 'gzip' }, parseAs: 'arrayBuffer' });
    const gzBytes = Buffer.from(expectStatus(gz, 200) as unknown as ArrayBuffer);
    expect(gz.response.headers.get('content-encoding')).toBe('gzip');
    expect(JSON.parse(gunzipSync(gzBytes).toString())).toEqual(entry);
  }, 300_000);
});
