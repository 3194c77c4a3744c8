/**
 * Scans uploaded to Plus entries over HTTP, on the test database (PGlite, or PostgreSQL with
 * ATRIUM_TEST_DATABASE_URL): a PDF without a text layer and image files are read by OCR in the
 * ingestion workers, the file says `ocr: true`, and context-for-prompt finds their sentences.
 * Over the OCR caps (pages, pixels, time): 413 naming the file and the cap, nothing stored.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import type { Part } from '../helpers/multipart.js';
import { SMALL_CAPS } from './hostile-files.js';
import { pngHeader, scanPdf, textImage, textTiff } from './scans.js';

// Tesseract reads each page in about a second on a busy 2-core machine (no timing is asserted).
vi.setConfig({ testTimeout: 180_000 });

const upload = (filename: string, data: Buffer, contentType = 'application/octet-stream'): Part => ({ name: 'files', filename, contentType, data });

async function save(t: TestApp, key: string, files: Part[]) {
  return t.api(key).POST('/api/v1/plus', multipartBody([{ name: 'title', value: 'scans' }, ...files]));
}

const plusAt = (plusId: string) => ({ params: { path: { plusId } } });
const addFiles = (t: TestApp, key: string, plusId: string, files: Part[]) =>
  t.api(key).POST('/api/v1/plus/{plusId}/add-file', { ...plusAt(plusId), ...multipartBody(files) });
const contextForPrompt = (t: TestApp, key: string, plusId: string, content: string) =>
  t.api(key).POST('/api/v1/plus/{plusId}/context-for-prompt', { ...plusAt(plusId), body: { content } });

async function contextFor(t: TestApp, key: string, plusId: string, question: string): Promise<string> {
  return expectStatus(await contextForPrompt(t, key, plusId, question), 200).content.replace(/\s+/g, ' ');
}

async function teamFiles(t: TestApp, teamId: string): Promise<number> {
  const r = (await t.database.db.execute(
    sql`select count(*)::int as n from plus_files f join plus_entries e on e.id = f.plus_id where e.team_id = ${teamId}`,
  )) as unknown as { rows: Array<{ n: number }> };
  return r.rows[0]!.n;
}

const PAGES = [
  ['Minutes of the harbour board, spring session.', 'The board approved a new crane for the east quay.'],
  ['The treasurer reported that the lighthouse lamp costs forty shillings a month.', 'Repairs to the breakwater were deferred.'],
  ['The next meeting will discuss the ferry timetable.'],
];

describe('scans in Plus entries', () => {
  let t: TestApp;
  let team: TeamFixture;
  beforeAll(async () => {
    t = await startTestApp({ ingest: SMALL_CAPS });
    team = await newTeam(t);
  });
  afterAll(() => t.close());

  it('a PDF without a text layer: ocr is true and context-for-prompt finds its sentence', async () => {
    const res = await save(t, team.ownerKey, [upload('minutes.pdf', scanPdf(PAGES), 'application/pdf')]);
    const plus = expectStatus(res, 200);
    expect(plus.files).toHaveLength(1);
    expect(plus.files[0]).toMatchObject({ filename: 'minutes.pdf', mimeType: 'application/pdf', ocr: true });
    expect(plus.files[0]!.fileChunks.map((c) => c.fileDataProcessed).join(' ')).toContain('lighthouse lamp costs forty shillings');

    const context = await contextFor(t, team.ownerKey, plus.id, 'How much does the lighthouse lamp cost?');
    expect(context).toContain('The treasurer reported that the lighthouse lamp costs forty shillings a month.');
    // the same in the file view read back, and in the listing's stored column
    const again = expectStatus(await t.api(team.ownerKey).GET('/api/v1/plus/{plusId}', plusAt(plus.id)), 200);
    expect(again.files[0]!.ocr).toBe(true);
  });

  it('PNG, JPEG, TIFF and WebP files added to an entry are read too; a typed file says ocr: false', async () => {
    const created = await save(t, team.ownerKey, [upload('notes.md', Buffer.from('# Notes\n\nTyped notes about the orchard.'), 'text/markdown')]);
    const plusId = expectStatus(created, 200).id;
    const res = await addFiles(t, team.ownerKey, plusId, [
      upload('receipt.png', textImage(['Receipt: two crates of quinces delivered to the mill.']), 'image/png'),
      upload('memo.jpg', textImage(['Memo: the granary roof leaks after heavy rain.'], 'jpeg'), 'image/jpeg'),
      upload('fax.tif', textTiff(['Fax: the blacksmith requests more charcoal.'])),
      upload('note.webp', textImage(['Note: the weaver moved to the north street.'], 'webp')),
    ]);
    const files = expectStatus(res, 200).files;
    expect(files.map((f) => [f.filename, f.mimeType, f.ocr])).toEqual([
      ['notes.md', 'text/markdown', false],
      ['receipt.png', 'image/png', true],
      ['memo.jpg', 'image/jpeg', true],
      ['fax.tif', 'image/tiff', true],
      ['note.webp', 'image/webp', true],
    ]);
    expect(await contextFor(t, team.ownerKey, plusId, 'Who delivered quinces to the mill?')).toContain('Receipt: two crates of quinces delivered to the mill.');
    expect(await contextFor(t, team.ownerKey, plusId, 'what does the blacksmith request?')).toContain('the blacksmith requests more charcoal');
    // the image is served back as it was uploaded, with its type
    const png = await t.api(team.ownerKey).GET('/api/v1/plus/file/{fileId}/content', { params: { path: { fileId: files[1]!.id } }, parseAs: 'arrayBuffer' });
    expect(png.response.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(png.data as ArrayBuffer)
        .subarray(1, 4)
        .toString('latin1'),
    ).toBe('PNG');
  });

  it('GET …/reading shows the pages read of a scan while it is uploaded, then nothing; another team gets 404', async () => {
    const created = await save(t, team.ownerKey, [upload('first.png', textImage(['A first page.']))]);
    const plusId = expectStatus(created, 200).id;
    const reading = (key: string, id = plusId) => t.api(key).GET('/api/v1/plus/{plusId}/reading', plusAt(id));
    expect(expectStatus(await reading(team.ownerKey), 200)).toEqual({ files: [] });
    const pending = addFiles(t, team.ownerKey, plusId, [upload('board.pdf', scanPdf(PAGES))]);
    let settled = false;
    void pending.finally(() => (settled = true));
    const seen: Array<{ filename: string; pages: number; pagesRead: number }> = [];
    while (!settled) {
      seen.push(...expectStatus(await reading(team.ownerKey), 200).files);
      await new Promise((r) => setTimeout(r, 20));
    }
    expectStatus(await pending, 200);
    expect(seen.length).toBeGreaterThan(0);
    for (const f of seen) expect(f).toMatchObject({ filename: 'board.pdf', pages: 3 });
    const read = seen.map((f) => f.pagesRead);
    expect(read).toEqual([...read].sort((a, b) => a - b)); // never goes back
    expect(Math.max(...read)).toBeGreaterThan(0);
    expect(expectStatus(await reading(team.ownerKey), 200)).toEqual({ files: [] });

    const other = await newTeam(t);
    const theirs = await reading(other.ownerKey);
    const missing = await reading(other.ownerKey, '00000000-0000-4000-8000-000000000000');
    expect(expectProblem(theirs, 404)).toEqual(expectProblem(missing, 404));
  });

  it('another team cannot read a scan: its entry answers 404 like a missing one', async () => {
    const res = await save(t, team.ownerKey, [upload('private.png', textImage(['Private: the vault code is written here.']))]);
    const plusId = expectStatus(res, 200).id;
    const other = await newTeam(t);
    const theirs = await contextForPrompt(t, other.ownerKey, plusId, 'vault code');
    const missing = await contextForPrompt(t, other.ownerKey, '00000000-0000-4000-8000-000000000000', 'vault code');
    expect(expectProblem(theirs, 404)).toEqual(expectProblem(missing, 404));
  });

  it('more pages without a text layer than INGEST_OCR_MAX_PAGES → 413 naming the file and the cap; nothing stored', async () => {
    const before = await teamFiles(t, team.teamId);
    const res = await save(t, team.ownerKey, [
      upload('ok.png', textImage(['fine'])),
      upload('thick.pdf', scanPdf([['a'], ['b'], ['c'], ['d']]), 'application/pdf'),
    ]);
    const p = expectProblem(res, 413);
    expect(p.code).toBe('file_over_ingest_limit');
    expect(p.detail).toBe('"thick.pdf" has more than 3 pages without a text layer; the limit is 3 pages read by OCR per file (INGEST_OCR_MAX_PAGES).');
    expect(await teamFiles(t, team.teamId)).toBe(before);
  });

  it('an image over INGEST_OCR_MAX_PIXELS → 413 from its header alone; /healthz keeps answering', async () => {
    const before = await teamFiles(t, team.teamId);
    const p = expectProblem(await save(t, team.ownerKey, [upload('huge.png', pngHeader(100_000, 100_000), 'image/png')]), 413);
    expect(p.code).toBe('file_over_ingest_limit');
    expect(p.detail).toBe('"huge.png" is 100000 × 100000 px; the limit is 4000000 px per image (INGEST_OCR_MAX_PIXELS).');
    expect(await teamFiles(t, team.teamId)).toBe(before);
    expect((await t.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('a damaged image → 400 naming it; nothing stored', async () => {
    const before = await teamFiles(t, team.teamId);
    const torn = Buffer.concat([pngHeader(300, 100), Buffer.alloc(100)]);
    const p = expectProblem(await save(t, team.ownerKey, [upload('torn.png', torn, 'image/png')]), 400);
    expect(p.code).toBe('corrupt_file');
    expect(p.detail).toMatch(/^"torn.png" could not be read as an image/);
    expect(await teamFiles(t, team.teamId)).toBe(before);
  });

  it('/healthz answers while a worker reads a scan by OCR', async () => {
    const pending = save(t, team.ownerKey, [upload('board.pdf', scanPdf(PAGES), 'application/pdf')]);
    let settled = false;
    void pending.finally(() => (settled = true));
    let answeredWhileBusy = 0;
    while (!settled) {
      const health = await t.request({ method: 'GET', url: '/healthz' });
      expect(health.statusCode).toBe(200);
      if (!settled && t.services.plus.ingestStats().busy > 0) answeredWhileBusy++;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(answeredWhileBusy).toBeGreaterThan(0);
    expectStatus(await pending, 200);
  });
});

describe('the OCR time limit terminates the worker, not the server', () => {
  it('a scan that takes longer than INGEST_OCR_TIMEOUT_MS → 413; the worker is gone and nothing stored', async () => {
    // 0.1 s cannot even start Tesseract; typed files keep their own, longer limit
    const t = await startTestApp({ ingest: { ...SMALL_CAPS, ocrTimeoutMs: 100 } });
    try {
      const team = await newTeam(t);
      const p = expectProblem(await save(t, team.ownerKey, [upload('slow.png', textImage(['Too slow to read.']))]), 413);
      expect(p.detail).toBe('"slow.png" took longer than 0.1 s to read by OCR; the limit is 0.1 s per file (INGEST_OCR_TIMEOUT_MS).');
      expect(t.services.plus.ingestStats().workers).toBe(0);
      expect(await teamFiles(t, team.teamId)).toBe(0);
      const typed = await save(t, team.ownerKey, [upload('typed.txt', Buffer.from('Typed text is read under INGEST_TIMEOUT_MS.'), 'text/plain')]);
      expectStatus(typed, 200);
    } finally {
      await t.close();
    }
  });
});
