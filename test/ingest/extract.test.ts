import { describe, expect, it } from 'vitest';
import { countTokens, detectKind, IngestError, normaliseText } from '../../src/ingest/index.js';
import { extractText, ingestDocument } from '../../src/ingest/pipeline.js';
import { caught, fixture, flat, utf8 } from './helpers.js';

async function extractFixture(name: string): Promise<string> {
  const bytes = fixture(name);
  const { kind } = detectKind(bytes, name, undefined);
  return extractText(bytes, kind, name);
}

describe('extraction of real documents', () => {
  it('markdown: the README text, as is', async () => {
    const text = await extractFixture('mammoth-readme.md');
    expect(text).toContain('# Mammoth .docx to HTML converter');
    expect(flat(text)).toContain('Mammoth is designed to convert .docx documents, such as those created by Microsoft Word, Google Docs and LibreOffice');
  });

  it('text: the GPL-3 licence', async () => {
    const text = await extractFixture('gpl-3.txt');
    expect(flat(text)).toContain('The GNU General Public License is a free, copyleft license for software and other kinds of works.');
    expect(flat(text)).toContain('END OF TERMS AND CONDITIONS');
  });

  it('html: body text without tags, headings as "#" lines, entities decoded', async () => {
    const text = await extractFixture('users-and-groups.html');
    expect(text).toContain('# Users and Groups in the Debian System');
    expect(text).toContain('# Chapter 1. Introduction');
    expect(flat(text)).toContain('The Debian base-passwd package contains the master versions of /etc/passwd and /etc/group.');
    expect(text).toContain('Copyright © 2001, 2002 Joey Hess');
    expect(text).not.toMatch(/<\/?(?:p|div|a|h\d|dl|dt|dd|body|html|title)\b/i);
    expect(text).not.toContain('&copy;');
    // &lt;...&gt; in the source is text, and stays text.
    expect(text).toContain('<base-passwd@packages.debian.org>');
  });

  it('html: drops script/style/head, keeps link text only, does not wrap lines', async () => {
    const html = `<!doctype html><html><head><title>T</title><style>p{color:red}</style></head><body>
      <script>var secret = "do not index";</script>
      <h2>Install <em>guide</em></h2>
      <p>Read the <a href="https://example.com/very/long/link">manual page</a> before you start, because this paragraph is deliberately longer than eighty characters.</p>
      <ul><li>first</li><li>second</li></ul>
      <noscript>enable js</noscript></body></html>`;
    const text = await extractText(utf8(html), 'html', 'page.html');
    expect(text).toContain('## Install guide');
    expect(text).toContain('Read the manual page before you start, because this paragraph is deliberately longer than eighty characters.');
    expect(text).toContain('- first');
    expect(text).not.toMatch(/secret|color:red|example\.com|enable js/);
  });

  it('csv: header-aware rows, one paragraph per row', async () => {
    const text = await extractFixture('debian-releases.csv');
    const rows = text.split('\n\n');
    const sourceLines = new TextDecoder().decode(fixture('debian-releases.csv')).trim().split('\n');
    expect(sourceLines[0]).toBe('version,codename,series,created,release,eol,eol-lts,eol-elts');
    expect(rows).toHaveLength(sourceLines.length - 1);
    expect(rows).toContain(
      'version: 12 | codename: Bookworm | series: bookworm | created: 2021-08-14 | release: 2023-06-10 | eol: 2026-07-11 | eol-lts: 2028-06-30 | eol-elts: 2033-06-30',
    );
    // Empty cells are omitted.
    expect(rows).toContain('codename: Sid | series: sid | created: 1993-08-16');
  });

  it('csv: quoted fields with commas, quotes and newlines; ; delimiter; no header', async () => {
    const csv = 'name;comment\r\n"Smith, J.";"said ""hi""\nthen left"\r\nDoe;ok\r\n';
    expect(await extractText(utf8(csv), 'csv', 'x.csv')).toBe('name: Smith, J. | comment: said "hi" then left\n\nname: Doe | comment: ok');
    expect(await extractText(utf8('1,2,3\n4,5,6\n'), 'csv', 'n.csv')).toBe('1 | 2 | 3\n\n4 | 5 | 6');
  });

  it('json: flattened to path lines, small objects as one record line', async () => {
    const text = await extractFixture('iso-4217-currencies.json');
    expect(text).toContain('4217[3]: alpha_3: AMD | name: Armenian Dram | numeric: 051');
    expect(text.split('\n\n').length).toBe(JSON.parse(new TextDecoder().decode(fixture('iso-4217-currencies.json')))['4217'].length);
    const nested = JSON.stringify({ name: 'atrium', tags: ['a', 'b'], server: { port: 8080, tls: { enabled: false, cert: null } }, 'odd key': '', empty: {} });
    expect(await extractText(utf8(nested), 'json', 'n.json')).toBe(
      'name: atrium\n\ntags[0]: a\ntags[1]: b\n\nserver.port: 8080\nserver.tls: enabled: false | cert: null\n\n["odd key"]: ""\n\nempty: {}',
    );
  });

  it('json: deep nesting does not overflow the stack', async () => {
    const deep = '['.repeat(5000) + '"bottom"' + ']'.repeat(5000);
    const text = await extractText(utf8(deep), 'json', 'deep.json');
    expect(text.endsWith(': bottom')).toBe(true);
  });

  it('pdf: text of all 17 pages, page numbers and running headers removed', async () => {
    const text = await extractFixture('shared-mime-info-spec.pdf');
    expect(text.startsWith('Shared MIME-info Database\n')).toBe(true);
    expect(text).toContain('This is version 0.21 of the Shared MIME-info Database specification, last updated 2 October 2018.');
    expect(flat(text)).toContain('Applications MUST match globs case-insensitively');
    expect(text).toContain('2.17. User modification');
    // The running header appears once per page in the PDF; it is kept only as the title.
    expect(text.split('\n').filter((l) => l === 'Shared MIME-info Database')).toHaveLength(1);
    expect(text.split('\n').filter((l) => /^\d{1,2}$/.test(l))).toHaveLength(0);
  });

  it('pdf: does not detach or modify the caller’s buffer', async () => {
    const bytes = fixture('shared-mime-info-spec.pdf');
    const before = bytes.length;
    await extractText(bytes, 'pdf', 'spec.pdf');
    expect(bytes.length).toBe(before);
    expect(bytes.buffer.byteLength).toBeGreaterThan(0);
    expect(new TextDecoder().decode(bytes.subarray(0, 5))).toBe('%PDF-');
  });

  it('docx: paragraphs and headings (Heading 1/2 and Title become "#" lines)', async () => {
    const text = await extractFixture('apache-license.docx');
    expect(text).toContain('# Apache License');
    expect(text).toContain('## 1. Definitions');
    expect(text).toContain('## 4. Redistribution');
    expect(text).toContain('"Licensor" shall mean the copyright owner or entity authorized by the copyright owner that is granting the License.');
    expect(text).not.toMatch(/<[a-z]/);
  });
});

describe('errors name the file and say what is wrong', () => {
  const cases: Array<[string, 'corrupt' | 'unsupported_type', RegExp]> = [
    ['truncated.pdf', 'corrupt', /not a readable PDF/],
    ['truncated.docx', 'corrupt', /could not be read as a Word document/],
    ['truncated.json', 'corrupt', /not valid JSON/],
    ['empty.docx', 'corrupt', /contains no text/],
    ['png-disguised.txt', 'unsupported_type', /PNG image/],
    ['not-a-docx.zip', 'unsupported_type', /ZIP archive/],
  ];
  it.each(cases)('%s → %s', async (name, kind, pattern) => {
    const err = await caught(() => ingestDocument(fixture(name), name));
    expect(err).toBeInstanceOf(IngestError);
    const e = err as IngestError;
    expect(e.kind).toBe(kind);
    expect(e.filename).toBe(name);
    expect(e.message).toContain(`"${name}"`);
    expect(e.message).toMatch(pattern);
    expect(e.httpStatus).toBe(kind === 'corrupt' ? 400 : 415);
  });

  it('empty and whitespace-only documents are corrupt ("contains no text")', async () => {
    for (const body of ['', '   \n\n\t  \r\n', '\u200B\uFEFF']) {
      const err = await caught(() => ingestDocument(utf8(body), 'blank.txt'));
      expect((err as IngestError).kind).toBe('corrupt');
      expect((err as IngestError).message).toBe('"blank.txt" contains no text.');
    }
    expect(((await caught(() => ingestDocument(utf8('<html><body><script>x()</script></body></html>'), 'a.html'))) as IngestError).kind).toBe('corrupt');
  });

  it('a garbage PDF body and a zero-page header fail cleanly (no hang, no unhandled rejection)', async () => {
    const garbage = new Uint8Array(5000);
    garbage.set(utf8('%PDF-1.4\n'));
    for (let i = 16; i < garbage.length; i++) garbage[i] = (i * 7919) % 256;
    for (const bytes of [garbage, utf8('%PDF-1.7\n%%EOF\n')]) {
      const err = await caught(() => ingestDocument(bytes, 'broken.pdf'));
      expect((err as IngestError).kind).toBe('corrupt');
    }
  });

  it('messages use a sanitised file name', async () => {
    const err = (await caught(() => ingestDocument(fixture('png-disguised.txt'), '../../evil\n"name".txt'))) as IngestError;
    expect(err.message).toContain('"evil name.txt"');
    expect(err.message).not.toContain('\n');
  });
});

describe('ingestDocument', () => {
  const docs: Array<[string, string, string]> = [
    ['mammoth-readme.md', 'markdown', 'text/markdown'],
    ['gpl-3.txt', 'text', 'text/plain'],
    ['users-and-groups.html', 'html', 'text/html'],
    ['debian-releases.csv', 'csv', 'text/csv'],
    ['iso-4217-currencies.json', 'json', 'application/json'],
    ['shared-mime-info-spec.pdf', 'pdf', 'application/pdf'],
    ['apache-license.docx', 'docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  ];
  it.each(docs)('%s → %s with consistent chunks', async (name, kind, mime) => {
    const doc = await ingestDocument(fixture(name), name);
    expect(doc.kind).toBe(kind);
    expect(doc.mimeType).toBe(mime);
    expect(doc.processed).toBe(normaliseText(doc.text));
    expect(doc.chunks.length).toBeGreaterThan(1);
    let sum = 0;
    for (const [i, c] of doc.chunks.entries()) {
      expect(c.index).toBe(i);
      expect(c.tokenSize).toBe(countTokens(c.processed));
      expect(c.tokenSize).toBeLessThanOrEqual(400);
      expect(c.processed).toBe(normaliseText(c.text));
      expect(doc.text).toContain(c.text);
      sum += c.tokenSize;
    }
    expect(doc.tokenSize).toBe(sum);
  });

  it('passes chunk options through', async () => {
    const small = await ingestDocument(fixture('gpl-3.txt'), 'gpl-3.txt', 'text/plain', { maxTokens: 100, overlapTokens: 0 });
    expect(Math.max(...small.chunks.map((c) => c.tokenSize))).toBeLessThanOrEqual(100);
    expect(small.chunks.length).toBeGreaterThan(70);
  });

  it('PDF text is not chunked at "# " comment lines; CSV rows are never headings', async () => {
    const pdf = await ingestDocument(fixture('shared-mime-info-spec.pdf'), 'spec.pdf');
    expect(pdf.chunks.some((c) => c.processed.startsWith('# update-mime-database'))).toBe(false);
    const csv = await ingestDocument(fixture('debian-releases.csv'), 'debian.csv', undefined, { maxTokens: 100 });
    for (const c of csv.chunks) expect(c.processed.startsWith('version: ') || c.processed.startsWith('codename: ')).toBe(true);
  });
});
