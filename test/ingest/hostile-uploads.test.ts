/**
 * "No upload can stall or crash the server": hostile files, generated here, uploaded over
 * HTTP on the real database. Each refusal is a 4xx problem naming the file (and the cap), and
 * nothing of the request is stored; the server keeps answering while they are parsed.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectProblem, newTeam, startTestApp, type TeamFixture, type TestApp } from '../helpers/app.js';
import { expectStatus, multipartBody } from '../helpers/api.js';
import type { Part } from '../helpers/multipart.js';
import { deepHtml, docx, DOCX_MIME, MiB, nestedTables, para, pdfWithPages, SMALL_CAPS, zipArchive } from './hostile-files.js';

// Generating and parsing these files takes seconds on a busy 2-core machine (no timing is asserted).
vi.setConfig({ testTimeout: 120_000 });

const upload = (filename: string, data: Buffer | string, contentType = 'application/octet-stream'): Part => ({
  name: 'files',
  filename,
  contentType,
  data: Buffer.isBuffer(data) ? data : Buffer.from(data),
});

async function save(t: TestApp, key: string, files: Part[], fields: Record<string, string> = { title: 'hostile' }) {
  const body = multipartBody([...Object.entries(fields).map(([name, value]) => ({ name, value })), ...files]);
  return t.api(key).POST('/api/v1/plus', body);
}

/** The first file of an entry stored with 200. */
const firstFile = (res: Awaited<ReturnType<typeof save>>) => expectStatus(res, 200).files[0]!;

/** Rows of the team's Plus entries, files and chunks (scoped: other test files share PostgreSQL). */
async function teamRows(t: TestApp, teamId: string): Promise<number[]> {
  const q = async (query: string): Promise<number> => {
    const r = (await t.database.db.execute(sql.raw(query.replace('$team', `'${teamId}'`)))) as unknown as { rows: Array<{ n: number }> };
    return r.rows[0]!.n;
  };
  return Promise.all([
    q('select count(*)::int as n from plus_entries where team_id = $team'),
    q('select count(*)::int as n from plus_files f join plus_entries e on e.id = f.plus_id where e.team_id = $team'),
    q('select count(*)::int as n from plus_chunks c join plus_entries e on e.id = c.plus_id where e.team_id = $team'),
  ]);
}

/** A prose page that differs from every other page (so nothing is taken for a running header). */
const prosePage = (i: number): string[] => [
  `Chapter ${i}: the ${['harbour', 'orchard', 'quarry', 'lighthouse', 'market'][i % 5]} records of year ${1800 + i}.`,
  `Entry ${i * 7} notes that ${i % 3 === 0 ? 'grain' : 'timber'} arrived late, and ${(i * 13) % 97} carts were counted.`,
  `The clerk wrote ${'several words '.repeat(1 + (i % 4))}before closing the ledger for day ${i}.`,
];

describe('hostile uploads are refused with 413/400 naming the file and the cap, storing nothing', () => {
  let t: TestApp;
  let team: TeamFixture;
  beforeAll(async () => {
    t = await startTestApp({ ingest: SMALL_CAPS });
    team = await newTeam(t);
  });
  afterAll(() => t.close());

  it('a PDF with more pages than INGEST_MAX_PDF_PAGES → 413; the worker is retired and the next upload works', async () => {
    const before = await teamRows(t, team.teamId);
    const pdf = pdfWithPages(150, prosePage);
    const res = await save(t, team.ownerKey, [
      upload('gpl.txt', 'A fine text file that would be stored.', 'text/plain'),
      upload('many-pages.pdf', pdf, 'application/pdf'),
    ]);
    const p = expectProblem(res, 413);
    expect(p.code).toBe('file_over_ingest_limit');
    expect(p.detail).toBe('"many-pages.pdf" has 150 pages; the limit is 100 pages per PDF (INGEST_MAX_PDF_PAGES).');
    expect(p.errors).toEqual([{ path: 'files/many-pages.pdf', message: p.detail }]);
    expect(await teamRows(t, team.teamId)).toEqual(before);
    expect(t.services.plus.ingestStats()).toEqual({ workers: 0, busy: 0, queued: 0 });

    const ok = await save(t, team.ownerKey, [upload('short.pdf', pdfWithPages(3, prosePage), 'application/pdf')]);
    expect(firstFile(ok).fileChunks[0]!.fileDataProcessed).toContain('quarry records of year 1802');
  });

  it('a DOCX whose document inflates to 200 MB (875 KB on the wire) → 413 on the per-member cap', async () => {
    const before = await teamRows(t, team.teamId);
    const bomb = await docx({ size: 200 * MiB, fill: para('bomb') });
    expect(bomb.length).toBeLessThan(2 * MiB);
    const p = expectProblem(await save(t, team.ownerKey, [upload('bomb.docx', bomb, DOCX_MIME)]), 413);
    expect(p.detail).toContain('"bomb.docx"');
    expect(p.detail).toContain('word/document.xml');
    expect(p.detail).toContain('4 MiB per member (INGEST_MAX_INFLATED_MEMBER_BYTES)');
    expect(await teamRows(t, team.teamId)).toEqual(before);
  });

  it('a DOCX whose members are each under the cap but together over it → 413 on the total cap', async () => {
    const filler = (n: number) => ({ name: `word/media/filler${n}.xml`, data: { size: 3 * MiB, fill: 'x' } });
    const archive = await docx(para('Small document body.'), [filler(1), filler(2)]);
    const p = expectProblem(await save(t, team.ownerKey, [upload('spread.docx', archive, DOCX_MIME)]), 413);
    expect(p.detail).toBe('"spread.docx" inflates to more than 6 MiB in total; the limit is 6 MiB per archive (INGEST_MAX_INFLATED_TOTAL_BYTES).');
  });

  it('a zip bomb that is not a document → 415 without inflating it', async () => {
    const before = await teamRows(t, team.teamId);
    const bomb = await zipArchive([{ name: 'zeros.bin', data: { size: 256 * MiB, fill: '\0' } }]);
    const p = expectProblem(await save(t, team.ownerKey, [upload('bomb.zip', bomb, 'application/zip')]), 415);
    expect(p.detail).toContain('"bomb.zip" is a ZIP archive');
    expect(await teamRows(t, team.teamId)).toEqual(before);
  }, 60_000);

  it('a file with more text than INGEST_MAX_CHARS → 413', async () => {
    const p = expectProblem(await save(t, team.ownerKey, [upload('long.txt', 'All work and no play. '.repeat(20_000), 'text/plain')]), 413);
    expect(p.detail).toBe('"long.txt" holds 440000 characters of text; the limit is 300000 characters per file (INGEST_MAX_CHARS).');
  });

  it('a PDF whose text passes INGEST_MAX_CHARS stops being read at that page → 413', async () => {
    const wordy = (i: number) => Array.from({ length: 60 }, (_, k) => `Line ${k} of page ${i} holds a sentence of ordinary length for a report.`);
    const p = expectProblem(await save(t, team.ownerKey, [upload('wordy.pdf', pdfWithPages(99, wordy), 'application/pdf')]), 413);
    expect(p.detail).toMatch(
      /^"wordy\.pdf" holds more than 300000 characters of text \(reached on page \d+\); the limit is 300000 characters per file \(INGEST_MAX_CHARS\)\.$/,
    );
  });

  it('a file that makes more chunks than INGEST_MAX_CHUNKS → 413', async () => {
    const sections = Array.from({ length: 400 }, (_, i) => `# Section ${i}\n\n${'Words of the section body go here. '.repeat(12)}`).join('\n\n');
    const p = expectProblem(await save(t, team.ownerKey, [upload('sections.md', sections, 'text/markdown')]), 413);
    expect(p.detail).toMatch(/^"sections\.md" makes \d+ chunks; the limit is 50 chunks per file \(INGEST_MAX_CHUNKS\)\.$/);
  });

  it('a refusal while adding files to an existing entry leaves the entry as it was', async () => {
    const created = await save(t, team.ownerKey, [upload('first.txt', 'The first file of the entry.', 'text/plain')]);
    const id = expectStatus(created, 200).id;
    const before = await teamRows(t, team.teamId);
    const body = multipartBody([upload('late.pdf', pdfWithPages(101, prosePage), 'application/pdf')]);
    expectProblem(await t.api(team.ownerKey).POST('/api/v1/plus/{plusId}/add-file', { params: { path: { plusId: id } }, ...body }), 413);
    expect(await teamRows(t, team.teamId)).toEqual(before);
  });
});

describe('hostile markup is extracted by a depth-safe path, never a 500', () => {
  let t: TestApp;
  let team: TeamFixture;
  beforeAll(async () => {
    t = await startTestApp({ ingest: SMALL_CAPS });
    team = await newTeam(t);
  });
  afterAll(() => t.close());

  it('5,000 nested <div>s (55 KB) are stored with their text', async () => {
    const html = deepHtml(5000, 'The treasure lies at the bottom of the nesting.');
    expect(html.length).toBeGreaterThan(50_000);
    const res = await save(t, team.ownerKey, [upload('deep.html', html, 'text/html')]);
    const text = firstFile(res)
      .fileChunks.map((c) => c.fileDataProcessed)
      .join('\n');
    expect(text).toContain('# Deep');
    expect(text).toContain('The treasure lies at the bottom of the nesting.');
    expect(text).toContain('After the divs.');
  });

  it('a DOCX of deeply nested tables is a 4xx (or extracted), never a 500; shallow nesting is extracted', async () => {
    const deep = await save(t, team.ownerKey, [upload('deep.docx', await docx(nestedTables(3000, 'cell at the bottom')), DOCX_MIME)]);
    expect(deep.response.status, JSON.stringify(deep.error)).toBeLessThan(500);
    if (deep.response.status !== 200) {
      const p = expectProblem(deep, 400);
      expect(p.detail).toBe('"deep.docx" is too deeply nested to be read.');
    }
    const shallow = await save(t, team.ownerKey, [upload('tables.docx', await docx(nestedTables(20, 'cell at the bottom')), DOCX_MIME)]);
    expect(firstFile(shallow).fileChunks[0]!.fileDataProcessed).toContain('cell at the bottom');
  });

  it('a PDF whose only text repeats on every page keeps that text', async () => {
    const res = await save(t, team.ownerKey, [
      upload(
        'notice.pdf',
        pdfWithPages(8, () => ['Office closed for inventory']),
        'application/pdf',
      ),
    ]);
    expect(firstFile(res).fileChunks[0]!.fileDataProcessed).toContain('Office closed for inventory');
  });
});

describe('the server keeps answering while files are parsed', () => {
  let t: TestApp;
  let team: TeamFixture;
  beforeAll(async () => {
    t = await startTestApp({ ingest: { ...SMALL_CAPS, maxPdfPages: 5000, maxChars: 5_000_000, maxChunks: 20_000 } });
    team = await newTeam(t);
  });
  afterAll(() => t.close());

  it('/healthz answers while a worker is busy with a 1,500-page PDF, which is then stored', async () => {
    const pending = save(t, team.ownerKey, [upload('manual.pdf', pdfWithPages(1500, prosePage), 'application/pdf')]);
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
    expect(firstFile(await pending).fileChunks.length).toBeGreaterThan(10);
  }, 180_000);
});

describe('the time and memory limits terminate the worker, not the server', () => {
  it('a file that takes longer than INGEST_TIMEOUT_MS → 413; the worker is terminated', async () => {
    const t = await startTestApp({ ingest: { ...SMALL_CAPS, maxPdfPages: 5000, maxChars: 5_000_000, maxChunks: 20_000, timeoutMs: 100 } });
    try {
      const team = await newTeam(t);
      const before = await teamRows(t, team.teamId);
      const p = expectProblem(await save(t, team.ownerKey, [upload('slow.pdf', pdfWithPages(1500, prosePage), 'application/pdf')]), 413);
      expect(p.detail).toBe('"slow.pdf" took longer than 0.1 s to read; the limit is 0.1 s per file (INGEST_TIMEOUT_MS).');
      expect(t.services.plus.ingestStats().workers).toBe(0);
      expect(await teamRows(t, team.teamId)).toEqual(before);
      expect((await t.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  }, 120_000);

  it('a file that needs more heap than INGEST_WORKER_MAX_MEMORY_MB → 413; the worker is terminated', async () => {
    const t = await startTestApp({
      ingest: { ...SMALL_CAPS, workerMaxMemoryMb: 64, maxChars: 50_000_000, maxChunks: 1_000_000 },
      upload: { maxFileBytes: 40 * MiB, maxRequestBytes: 40 * MiB, maxFiles: 5 },
    });
    try {
      const team = await newTeam(t);
      const before = await teamRows(t, team.teamId);
      const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon'.split(' ');
      const parts: string[] = [];
      for (let i = 0; i < 2_000_000; i++) parts.push(words[i % 20]! + (i % 13 === 0 ? '.\n' : ' ') + (i % 101 === 0 ? '\n' : ''));
      const p = expectProblem(await save(t, team.ownerKey, [upload('heavy.txt', parts.join(''), 'text/plain')]), 413);
      expect(p.detail).toBe('"heavy.txt" needs more than 64 MiB of memory to read; the limit is 64 MiB (INGEST_WORKER_MAX_MEMORY_MB).');
      expect(t.services.plus.ingestStats().workers).toBe(0);
      expect(await teamRows(t, team.teamId)).toEqual(before);
      expect((await t.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  }, 120_000);
});
