/**
 * Hostile documents, generated at test time (never checked in): PDFs with many pages, ZIP/DOCX
 * archives whose members inflate hugely, deeply nested HTML and DOCX.
 */
import { constants, crc32, createDeflateRaw, deflateRawSync } from 'node:zlib';
import type { Config } from '../../src/config.js';

/** A valid PDF of `pages` pages; page i shows the lines `lines(i)` (Helvetica, ASCII). */
export function pdfWithPages(pages: number, lines: (page: number) => string[]): Buffer {
  const parts: string[] = ['%PDF-1.4\n'];
  const offsets: number[] = [];
  let length = parts[0]!.length;
  const add = (body: string): void => {
    offsets.push(length);
    const obj = `${offsets.length} 0 obj\n${body}\nendobj\n`;
    parts.push(obj);
    length += obj.length;
  };
  const kids: string[] = [];
  for (let i = 0; i < pages; i++) kids.push(`${4 + 2 * i} 0 R`);
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add(`<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`);
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  for (let i = 0; i < pages; i++) {
    add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`);
    const escaped = lines(i).map((l) => `(${l.replace(/[\\()]/g, '\\$&')}) Tj T*`);
    const content = `BT /F1 11 Tf 14 TL 72 740 Td ${escaped.join(' ')} ET`;
    add(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  }
  const xref = [`xref\n0 ${offsets.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(`${xref}trailer\n<< /Size ${offsets.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`);
  return Buffer.from(parts.join(''), 'latin1');
}

export interface ZipMember {
  name: string;
  /** Content, or a size to fill with repetitions of `fill` (deflated in a stream, never held whole). */
  data: Buffer | { size: number; fill: string };
}

async function deflateMember(data: ZipMember['data']): Promise<{ compressed: Buffer; crc: number; size: number }> {
  if (Buffer.isBuffer(data)) return { compressed: deflateRawSync(data), crc: crc32(data), size: data.length };
  const block = Buffer.from(data.fill.repeat(Math.ceil(65_536 / data.fill.length)).slice(0, 65_536), 'latin1');
  const out: Buffer[] = [];
  const deflate = createDeflateRaw({ level: constants.Z_BEST_SPEED });
  deflate.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  let crc = 0;
  for (let left = data.size; left > 0; left -= block.length) {
    const piece = left >= block.length ? block : block.subarray(0, left);
    crc = crc32(piece, crc);
    if (!deflate.write(piece)) await new Promise((r) => deflate.once('drain', r));
  }
  deflate.end();
  await done;
  return { compressed: Buffer.concat(out), crc, size: data.size };
}

/** A ZIP archive (deflate) of the members. */
export async function zipArchive(members: ZipMember[]): Promise<Buffer> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const { compressed, crc, size } = await deflateMember(m.data);
    const name = Buffer.from(m.name, 'latin1');
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, compressed);
    centrals.push(central, name);
    offset += 30 + name.length + compressed.length;
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

export const para = (text: string): string => `<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`;

/** A DOCX whose word/document.xml body is `body` (WordprocessingML), plus any extra members. */
export function docx(body: string | { size: number; fill: string }, extra: ZipMember[] = []): Promise<Buffer> {
  const document: ZipMember['data'] =
    typeof body === 'string' ? Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>${body}</w:body></w:document>`) : body;
  return zipArchive([
    { name: '[Content_Types].xml', data: Buffer.from(CONTENT_TYPES) },
    { name: '_rels/.rels', data: Buffer.from(RELS) },
    { name: 'word/document.xml', data: document },
    ...extra,
  ]);
}

/** `depth` nested tables with one paragraph at the bottom (mammoth turns it into nested HTML tables). */
export function nestedTables(depth: number, text: string): string {
  return '<w:tbl><w:tr><w:tc>'.repeat(depth) + para(text) + '</w:tc></w:tr></w:tbl>'.repeat(depth);
}

/** `depth` nested <div>s around `text` (5,000 levels are 55 KB). */
export function deepHtml(depth: number, text: string): string {
  return `<!doctype html><html><body><h1>Deep</h1>${'<div>'.repeat(depth)}${text}${'</div>'.repeat(depth)}<p>After the divs.</p></body></html>`;
}

/** The ingestion caps the hostile-upload tests run under: small, so a bomb is refused early and cheaply. */
export const MiB = 1_048_576;
export const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const SMALL_CAPS: Config['ingest'] = {
  workers: 2,
  workerMaxMemoryMb: 512,
  timeoutMs: 120_000,
  maxPdfPages: 100,
  maxInflatedMemberBytes: 4 * MiB,
  maxInflatedTotalBytes: 6 * MiB,
  maxChars: 300_000,
  maxChunks: 50,
  maxOcrPages: 3,
  maxOcrPixels: 4_000_000,
  ocrTimeoutMs: 120_000,
};
