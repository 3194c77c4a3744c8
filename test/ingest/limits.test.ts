/** The caps and the depth-safe paths, in process (the HTTP tests are in hostile-uploads.test.ts). */
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../src/ingest/index.js';
import { flattenDeepHtml, MAX_HTML_DEPTH } from '../../src/ingest/html.js';
import { ingestDocument, mergePdfPages } from '../../src/ingest/pipeline.js';
import { readZipMembers } from '../../src/ingest/zip.js';
import { caught, utf8 } from './helpers.js';
import { deepHtml, docx, para, pdfWithPages } from './hostile-files.js';

const MiB = 1_048_576;

describe('mergePdfPages', () => {
  it('drops a running header when there is other text', () => {
    const pages = ['Acme Report\nIntro text one.', 'Acme Report\nBody text two.', 'Acme Report\nBody text three.', 'Acme Report\nEnd text four.'];
    expect(mergePdfPages(pages)).toBe('Acme Report\nIntro text one.\nBody text two.\nBody text three.\nEnd text four.');
  });

  it('keeps text that repeats on every page when it is all there is (page numbers still go)', () => {
    expect(mergePdfPages(['Confidential', 'Confidential\n2', 'Confidential\n3', 'Confidential\n4'])).toBe(
      'Confidential\nConfidential\nConfidential\nConfidential',
    );
  });
});

describe('flattenDeepHtml', () => {
  it('returns shallow HTML unchanged (same string)', () => {
    const html = '<div><p>a &amp; b<br>c</p></div>';
    expect(flattenDeepHtml(html, 3)).toBe(html); // <br> is the third level
  });

  it('removes the tags below the depth, keeping text, entities and the shallower markup', () => {
    expect(flattenDeepHtml('<div><div><p>x &amp; y</p></div></div><p>z</p>', 1)).toBe('<div>  x &amp; y  </div><p>z</p>');
    // an implied close (</div> closing the open <p>) has no tag to remove
    expect(flattenDeepHtml('<div><div><p>x</div></div>', 1)).toBe('<div>  x </div>');
  });

  it('makes 5,000 levels of nesting readable: every text survives, the depth is capped', async () => {
    const html = deepHtml(5000, 'bottom text');
    const flat = flattenDeepHtml(html, MAX_HTML_DEPTH);
    expect((flat.match(/<div>/g) ?? []).length).toBeLessThanOrEqual(MAX_HTML_DEPTH);
    const doc = await ingestDocument(utf8(html), 'deep.html');
    expect(doc.processed).toContain('bottom text');
    expect(doc.processed).toContain('After the divs.');
  });
});

describe('caps in ingestDocument', () => {
  it('pages, characters and chunks', async () => {
    const pdf = pdfWithPages(12, (i) => [`Page ${i} speaks of item ${i * 3}.`]);
    const pages = (await caught(() => ingestDocument(pdf, 'a.pdf', undefined, { limits: { maxPdfPages: 11 } }))) as IngestError;
    expect([pages.kind, pages.httpStatus, pages.message]).toEqual([
      'too_large',
      413,
      '"a.pdf" has 12 pages; the limit is 11 pages per PDF (INGEST_MAX_PDF_PAGES).',
    ]);
    expect((await ingestDocument(pdf, 'a.pdf', undefined, { limits: { maxPdfPages: 12 } })).kind).toBe('pdf');

    const chars = (await caught(() => ingestDocument(utf8('x'.repeat(101)), 'x.txt', undefined, { limits: { maxChars: 100 } }))) as IngestError;
    expect(chars.message).toBe('"x.txt" holds 101 characters of text; the limit is 100 characters per file (INGEST_MAX_CHARS).');

    const text = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} is here.`).join('\n\n');
    const chunks = (await caught(() =>
      ingestDocument(utf8(text), 's.txt', undefined, { maxTokens: 16, overlapTokens: 0, limits: { maxChunks: 5 } }),
    )) as IngestError;
    expect(chunks.message).toMatch(/^"s\.txt" makes \d+ chunks; the limit is 5 chunks per file \(INGEST_MAX_CHUNKS\)\.$/);
  });

  it('inflated DOCX members are measured for real, not by their declared sizes', async () => {
    const archive = await docx(para('Hello'), [{ name: 'word/big.xml', data: { size: 2 * MiB, fill: 'ab' } }]);
    // lie in the central directory and the local header alike: declare the big member as 10 bytes
    const b = Buffer.from(archive);
    const at = b.lastIndexOf(Buffer.from('word/big.xml')) - 46;
    expect(b.readUInt32LE(at)).toBe(0x02014b50);
    b.writeUInt32LE(10, at + 24);
    b.writeUInt32LE(10, b.readUInt32LE(at + 42) + 22);
    const err = caughtSync(() => readZipMembers(b, 'liar.docx', { maxInflatedMemberBytes: MiB, maxInflatedTotalBytes: 4 * MiB }));
    expect(err.message).toBe(
      '"liar.docx" has a member (word/big.xml) that inflates to more than 1 MiB; the limit is 1 MiB per member (INGEST_MAX_INFLATED_MEMBER_BYTES).',
    );
    // under the cap, the lie itself is the refusal
    const lie = caughtSync(() => readZipMembers(b, 'liar.docx', { maxInflatedMemberBytes: 3 * MiB, maxInflatedTotalBytes: 4 * MiB }));
    expect([lie.kind, lie.message]).toEqual([
      'corrupt',
      '"liar.docx" could not be read as a Word document: its member word/big.xml does not match its directory entry (size or checksum).',
    ]);
    expect(
      readZipMembers(archive, 'honest.docx', { maxInflatedMemberBytes: 3 * MiB, maxInflatedTotalBytes: 4 * MiB }).map((m) => [m.name, m.data.length]),
    ).toEqual([
      ['[Content_Types].xml', expect.any(Number)],
      ['_rels/.rels', expect.any(Number)],
      ['word/document.xml', expect.any(Number)],
      ['word/big.xml', 2 * MiB],
    ]);
  });
});

function caughtSync(fn: () => void): IngestError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(IngestError);
    return err as IngestError;
  }
  throw new Error('expected an error');
}
