import { describe, expect, it } from 'vitest';
import { CANONICAL_MIME, detectKind, IngestError } from '../../src/ingest/index.js';
import { caught, fixture, utf8 } from './helpers.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

function errorOf(fn: () => unknown): IngestError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(IngestError);
    return err as IngestError;
  }
  throw new Error('expected detectKind to throw');
}

describe('detectKind — binary formats by magic bytes', () => {
  it('detects a real PDF whatever it is called or declared as', () => {
    const pdf = fixture('shared-mime-info-spec.pdf');
    expect(detectKind(pdf, 'spec.pdf', 'application/pdf')).toEqual({ kind: 'pdf', mimeType: 'application/pdf' });
    expect(detectKind(pdf, 'notes.txt', 'text/plain').kind).toBe('pdf');
    expect(detectKind(pdf, 'download', undefined).kind).toBe('pdf');
    expect(detectKind(pdf, 'x.bin', 'application/octet-stream').kind).toBe('pdf');
  });

  it('accepts a PDF header after leading junk (as PDF readers do) when the file claims to be a PDF', () => {
    const pdf = fixture('shared-mime-info-spec.pdf');
    expect(detectKind(new Uint8Array([...utf8('\n\n  '), ...pdf]), 'scan', undefined).kind).toBe('pdf');
    expect(detectKind(new Uint8Array([...utf8('junk'), ...pdf]), 'a.pdf', undefined).kind).toBe('pdf');
    expect(detectKind(new Uint8Array([...utf8('junk'), ...pdf]), 'a', 'application/pdf').kind).toBe('pdf');
  });

  it('keeps a text file that merely mentions %PDF- near its start as text', () => {
    expect(detectKind(utf8('Every PDF starts with the bytes %PDF-1.x, then objects.'), 'notes.md', undefined).kind).toBe('markdown');
  });

  it('detects a real DOCX from its ZIP directory, even without an extension', () => {
    const docx = fixture('apache-license.docx');
    expect(detectKind(docx, 'apache-license.docx', DOCX)).toEqual({ kind: 'docx', mimeType: DOCX });
    expect(detectKind(docx, 'report', undefined).kind).toBe('docx');
    expect(detectKind(docx, 'report.zip', 'application/zip').kind).toBe('docx');
  });

  it('rejects a ZIP that is not a Word document as unsupported_type', () => {
    const zip = fixture('not-a-docx.zip');
    const err = errorOf(() => detectKind(zip, 'archive.zip', 'application/zip'));
    expect(err.kind).toBe('unsupported_type');
    expect(err.httpStatus).toBe(415);
    expect(err.message).toContain('archive.zip');
    expect(err.message).toMatch(/ZIP archive/);
  });

  it('reports a .docx whose archive has no word/document.xml as corrupt', () => {
    const err = errorOf(() => detectKind(fixture('not-a-docx.zip'), 'contract.docx', undefined));
    expect(err.kind).toBe('corrupt');
    expect(err.httpStatus).toBe(400);
    expect(err.message).toContain('contract.docx');
  });

  it('still classifies a truncated DOCX as docx (extraction then reports it corrupt)', () => {
    expect(detectKind(fixture('truncated.docx'), 'apache-license.docx', undefined).kind).toBe('docx');
  });

  it('rejects a real PNG named .txt and declared text/plain', () => {
    const err = errorOf(() => detectKind(fixture('png-disguised.txt'), 'png-disguised.txt', 'text/plain'));
    expect(err.kind).toBe('unsupported_type');
    expect(err.filename).toBe('png-disguised.txt');
    expect(err.message).toContain('"png-disguised.txt"');
    expect(err.message).toMatch(/PNG image/);
  });

  it.each([
    ['JPEG', [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46]],
    ['GIF', [...utf8('GIF89a'), 1, 0, 1, 0]],
    ['gzip', [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0]],
    ['ELF', [0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]],
    ['legacy Office', [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]],
    ['Windows executable', [...utf8('MZ'), ...new Array<number>(70).fill(0)]],
  ])('rejects %s content named .md', (_label, bytes) => {
    const err = errorOf(() => detectKind(new Uint8Array(bytes), 'notes.md', 'text/markdown'));
    expect(err.kind).toBe('unsupported_type');
    expect(err.message).toContain('notes.md');
  });

  it('rejects text with NUL bytes and invalid UTF-8 as unsupported_type', () => {
    expect(errorOf(() => detectKind(utf8('hello\0world'), 'a.txt', 'text/plain')).kind).toBe('unsupported_type');
    const latin1 = new Uint8Array([...utf8('caf'), 0xe9, ...utf8(' au lait')]);
    const err = errorOf(() => detectKind(latin1, 'menu.txt', undefined));
    expect(err.kind).toBe('unsupported_type');
    expect(err.message).toMatch(/UTF-8/);
  });

  it('tolerates a multi-byte character cut by the 8 KiB sniff window', () => {
    const text = `${'a'.repeat(8191)}é and more`;
    expect(detectKind(utf8(text), 'long.txt', undefined).kind).toBe('text');
  });

  it('accepts UTF-16 text with a byte-order mark', () => {
    const body = 'Hello, world';
    const bytes = new Uint8Array(2 + body.length * 2);
    bytes.set([0xff, 0xfe]);
    for (let i = 0; i < body.length; i++) bytes[2 + 2 * i] = body.charCodeAt(i);
    expect(detectKind(bytes, 'windows.txt', undefined).kind).toBe('text');
  });
});

describe('detectKind — claimed PDF/DOCX that is not one', () => {
  it('reports text named .pdf as corrupt', () => {
    const err = errorOf(() => detectKind(utf8('just some text'), 'invoice.pdf', undefined));
    expect(err.kind).toBe('corrupt');
    expect(err.message).toContain('invoice.pdf');
    expect(err.message).toMatch(/not a valid PDF/);
  });

  it('reports text declared application/pdf as corrupt', () => {
    expect(errorOf(() => detectKind(utf8('hello'), 'upload', 'application/pdf')).kind).toBe('corrupt');
  });

  it('reports text named .docx as corrupt', () => {
    expect(errorOf(() => detectKind(utf8('hello'), 'letter.docx', undefined)).kind).toBe('corrupt');
  });
});

describe('detectKind — text family from declared type, extension and content', () => {
  const cases: Array<[string, string | undefined, string, string]> = [
    ['notes.md', undefined, '# Title\n\ntext', 'markdown'],
    ['notes.MARKDOWN', undefined, 'text', 'markdown'],
    ['notes.md', 'text/plain', 'text', 'markdown'],
    ['notes.md', 'application/octet-stream', 'text', 'markdown'],
    ['notes.txt', 'text/markdown; charset=utf-8', 'text', 'markdown'],
    ['data.csv', undefined, 'a,b\n1,2', 'csv'],
    ['data.csv', 'application/vnd.ms-excel', 'a,b\n1,2', 'csv'],
    ['export', 'text/csv', 'a,b\n1,2', 'csv'],
    ['data.json', undefined, '{"a":1}', 'json'],
    ['data.txt', 'application/json', '{"a":1}', 'json'],
    ['data', 'application/ld+json', '{"a":1}', 'json'],
    ['page.html', undefined, '<p>hi</p>', 'html'],
    ['page.htm', 'text/html', '<p>hi</p>', 'html'],
    ['page.txt', 'text/plain', '<!DOCTYPE html>\n<html><body>hi</body></html>', 'html'],
    ['saved', undefined, '  <!-- saved -->\n<HTML lang="en"><body>x</body></HTML>', 'html'],
    ['README', undefined, 'Plain words.', 'text'],
    ['main.py', 'text/x-python', 'print("hi")', 'text'],
    ['notes.txt', undefined, '{"looks": "like json"}', 'text'],
    ['data.json', undefined, '<!doctype html><html></html>', 'json'],
  ];
  it.each(cases)('%s declared %s → %s', (name, mime, body, kind) => {
    const result = detectKind(utf8(body), name, mime);
    expect(result.kind).toBe(kind);
    expect(result.mimeType).toBe(CANONICAL_MIME[result.kind]);
  });

  it('returns canonical MIME types', () => {
    expect(detectKind(utf8('x'), 'a.md', 'text/x-markdown').mimeType).toBe('text/markdown');
    expect(detectKind(utf8('x'), 'a.txt', undefined).mimeType).toBe('text/plain');
    expect(detectKind(utf8('{}'), 'a.json', 'text/json').mimeType).toBe('application/json');
  });

  it('classifies an empty file as text (extraction then reports "no text")', async () => {
    expect(detectKind(new Uint8Array(0), 'empty.txt', undefined).kind).toBe('text');
    expect(await caught(() => detectKind(new Uint8Array(0), 'empty.pdf', undefined))).toBeInstanceOf(IngestError);
  });
});
