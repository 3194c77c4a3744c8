/**
 * Scans uploaded to Plus entries over HTTP, on the test database (PGlite, or PostgreSQL with
 * ATRIUM_TEST_DATABASE_URL): a PDF without a text layer and image files are read by OCR in the
 * ingestion workers, the file says `ocr: true`, and context-for-prompt finds their sentences.
 * Over the OCR caps (pages, pixels, time): 413 naming the file and the cap, nothing stored.
 */
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { multipart, type Part } from '../helpers/multipart.js';
import { SMALL_CAPS } from './hostile-files.js';
import { pngHeader, scanPdf, textImage, textTiff } from './scans.js';

// Tesseract reads each page in about a second on a busy 2-core machine (no timing is asserted).
vi.setConfig({ testTimeout: 180_000 });

const upload = (filename: string, data: Buffer, contentType = 'application/octet-stream'): Part => ({ name: 'files', filename, contentType, data });

async function save(t: TestApp, key: string, files: Part[]): Promise<LightMyRequestResponse> {
  return t.request({ method: 'POST', url: '/api/v1/plus', key, ...multipart([{ name: 'title', value: 'scans' }, ...files]) });
}

async function contextFor(t: TestApp, key: string, plusId: string, question: string): Promise<string> {
  const res = await t.request({ method: 'POST', url: `/api/v1/plus/${plusId}/context-for-prompt`, key, payload: { content: question } });
  expect(res.statusCode).toBe(200);
  return (res.json() as { content: string }).content.replace(/\s+/g, ' ');
}

async function teamFiles(t: TestApp, teamId: string): Promise<number> {
  const r = (await t.database.db.execute(
    sql`select count(*)::int as n from plus_files f join plus_entries e on e.id = f.plus_id where e.team_id = ${teamId}`,
  )) as unknown as { rows: Array<{ n: number }> };
  return r.rows[0]!.n;
}

interface FileView {
  id: string;
  filename: string;
  mimeType: string;
  ocr: boolean;
  fileChunks: Array<{ fileDataProcessed: string }>;
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
    expect(res.statusCode).toBe(200);
    const plus = res.json() as { id: string; files: FileView[] };
    expect(plus.files).toHaveLength(1);
    expect(plus.files[0]).toMatchObject({ filename: 'minutes.pdf', mimeType: 'application/pdf', ocr: true });
    expect(plus.files[0]!.fileChunks.map((c) => c.fileDataProcessed).join(' ')).toContain('lighthouse lamp costs forty shillings');

    const context = await contextFor(t, team.ownerKey, plus.id, 'How much does the lighthouse lamp cost?');
    expect(context).toContain('The treasurer reported that the lighthouse lamp costs forty shillings a month.');
    // the same in the file view read back, and in the listing's stored column
    const again = (await t.request({ method: 'GET', url: `/api/v1/plus/${plus.id}`, key: team.ownerKey })).json() as { files: FileView[] };
    expect(again.files[0]!.ocr).toBe(true);
  });

  it('PNG, JPEG, TIFF and WebP files added to an entry are read too; a typed file says ocr: false', async () => {
    const created = await save(t, team.ownerKey, [upload('notes.md', Buffer.from('# Notes\n\nTyped notes about the orchard.'), 'text/markdown')]);
    expect(created.statusCode).toBe(200);
    const plusId = (created.json() as { id: string }).id;
    const res = await t.request({
      method: 'POST',
      url: `/api/v1/plus/${plusId}/add-file`,
      key: team.ownerKey,
      ...multipart([
        upload('receipt.png', textImage(['Receipt: two crates of quinces delivered to the mill.']), 'image/png'),
        upload('memo.jpg', textImage(['Memo: the granary roof leaks after heavy rain.'], 'jpeg'), 'image/jpeg'),
        upload('fax.tif', textTiff(['Fax: the blacksmith requests more charcoal.'])),
        upload('note.webp', textImage(['Note: the weaver moved to the north street.'], 'webp')),
      ]),
    });
    expect(res.statusCode).toBe(200);
    const files = (res.json() as { files: FileView[] }).files;
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
    const png = await t.request({ method: 'GET', url: `/api/v1/plus/file/${files[1]!.id}/content`, key: team.ownerKey });
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.rawPayload.subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('GET …/reading shows the pages read of a scan while it is uploaded, then nothing; another team gets 404', async () => {
    const created = await save(t, team.ownerKey, [upload('first.png', textImage(['A first page.']))]);
    const plusId = (created.json() as { id: string }).id;
    const url = `/api/v1/plus/${plusId}/reading`;
    expect((await t.request({ method: 'GET', url, key: team.ownerKey })).json()).toEqual({ files: [] });
    const pending = t.request({
      method: 'POST',
      url: `/api/v1/plus/${plusId}/add-file`,
      key: team.ownerKey,
      ...multipart([upload('board.pdf', scanPdf(PAGES))]),
    });
    let settled = false;
    void pending.finally(() => (settled = true));
    const seen: Array<{ filename: string; pages: number; pagesRead: number }> = [];
    while (!settled) {
      const res = await t.request({ method: 'GET', url, key: team.ownerKey });
      expect(res.statusCode).toBe(200);
      seen.push(...(res.json() as { files: typeof seen }).files);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await pending).statusCode).toBe(200);
    expect(seen.length).toBeGreaterThan(0);
    for (const f of seen) expect(f).toMatchObject({ filename: 'board.pdf', pages: 3 });
    const read = seen.map((f) => f.pagesRead);
    expect(read).toEqual([...read].sort((a, b) => a - b)); // never goes back
    expect(Math.max(...read)).toBeGreaterThan(0);
    expect((await t.request({ method: 'GET', url, key: team.ownerKey })).json()).toEqual({ files: [] });

    const other = await newTeam(t);
    const theirs = await t.request({ method: 'GET', url, key: other.ownerKey });
    const missing = await t.request({ method: 'GET', url: '/api/v1/plus/00000000-0000-4000-8000-000000000000/reading', key: other.ownerKey });
    expect(expectProblem(theirs, 404)).toEqual(expectProblem(missing, 404));
  });

  it('another team cannot read a scan: its entry answers 404 like a missing one', async () => {
    const res = await save(t, team.ownerKey, [upload('private.png', textImage(['Private: the vault code is written here.']))]);
    const plusId = (res.json() as { id: string }).id;
    const other = await newTeam(t);
    const theirs = await t.request({
      method: 'POST',
      url: `/api/v1/plus/${plusId}/context-for-prompt`,
      key: other.ownerKey,
      payload: { content: 'vault code' },
    });
    const missing = await t.request({
      method: 'POST',
      url: `/api/v1/plus/00000000-0000-4000-8000-000000000000/context-for-prompt`,
      key: other.ownerKey,
      payload: { content: 'vault code' },
    });
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
    expect((await pending).statusCode).toBe(200);
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
      expect(typed.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
