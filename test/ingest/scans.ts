/**
 * Generated scans for the OCR tests and benchmark: sentences drawn on an image (@napi-rs/canvas),
 * and PDFs whose pages are only such images (hand-built, no text layer, no font).
 */
import { createCanvas } from '@napi-rs/canvas';

export type ScanFormat = 'png' | 'jpeg' | 'webp';

const FONT_PX = 44;
const LINE_PX = 64;
const MARGIN_PX = 60;

/**
 * Lines of black text on white, at least `width` pixels wide: wider when a line needs it, since
 * `sans-serif` is whichever font the machine has (DejaVu Sans draws the longest test sentence
 * wider than 1,700 pixels, and a clipped line is read as "a mc").
 */
function drawLines(lines: string[], width: number) {
  const font = `${FONT_PX}px sans-serif`;
  const measure = createCanvas(1, 1).getContext('2d');
  measure.font = font;
  const w = Math.max(width, ...lines.map((l) => Math.ceil(measure.measureText(l).width) + MARGIN_PX * 2));
  const height = MARGIN_PX * 2 + LINE_PX * Math.max(1, lines.length);
  const canvas = createCanvas(w, height);
  const g = canvas.getContext('2d');
  g.fillStyle = '#ffffff';
  g.fillRect(0, 0, w, height);
  g.fillStyle = '#000000';
  g.font = font;
  lines.forEach((line, i) => g.fillText(line, MARGIN_PX, MARGIN_PX + FONT_PX + i * LINE_PX));
  return { canvas, g, width: w, height };
}

/** Lines of black text on white (drawLines), encoded as `format`. */
export function textImage(lines: string[], format: ScanFormat = 'png', width = 1700): Buffer {
  const { canvas } = drawLines(lines, width);
  return format === 'png' ? canvas.toBuffer('image/png') : format === 'jpeg' ? canvas.toBuffer('image/jpeg', 92) : canvas.toBuffer('image/webp', 100);
}

/** The same lines as an uncompressed 8-bit greyscale TIFF (one strip). */
export function textTiff(lines: string[], width = 1700): Buffer {
  const { g, width: w, height } = drawLines(lines, width);
  const rgba = g.getImageData(0, 0, w, height).data;
  const grey = Buffer.alloc(w * height);
  for (let i = 0; i < grey.length; i++) grey[i] = rgba[i * 4]!;
  return tiff(w, height, grey);
}

/** A baseline TIFF header and one directory around 8-bit greyscale pixels (`pixels` may be empty: a header only). */
export function tiff(width: number, height: number, pixels: Buffer): Buffer {
  const entries: Array<[tag: number, type: 3 | 4, value: number]> = [
    [256, 4, width],
    [257, 4, height],
    [258, 3, 8],
    [259, 3, 1],
    [262, 3, 1],
    [273, 4, -1], // strip offset, filled in below
    [277, 3, 1],
    [278, 4, height],
    [279, 4, pixels.length],
  ];
  const ifd = 8;
  const data = ifd + 2 + entries.length * 12 + 4;
  const b = Buffer.alloc(data + pixels.length);
  b.write('II', 0, 'latin1');
  b.writeUInt16LE(42, 2);
  b.writeUInt32LE(ifd, 4);
  b.writeUInt16LE(entries.length, ifd);
  entries.forEach(([tag, type, value], i) => {
    const at = ifd + 2 + i * 12;
    b.writeUInt16LE(tag, at);
    b.writeUInt16LE(type, at + 2);
    b.writeUInt32LE(1, at + 4);
    const v = tag === 273 ? data : value;
    if (type === 3) b.writeUInt16LE(v, at + 8);
    else b.writeUInt32LE(v, at + 8);
  });
  pixels.copy(b, data);
  return b;
}

/** A PNG signature and IHDR claiming `width` × `height` pixels, and nothing else. */
export function pngHeader(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  b[24] = 8; // bit depth
  b[25] = 2; // truecolour
  return b;
}

/**
 * A PDF of one page per entry of `pages`. A list of lines is a scanned page: a JPEG of the lines
 * (DCTDecode image XObject) drawn over the whole page at 200 dpi, with no text, so no text layer.
 * `{ text }` is an ordinary page whose lines are text (Helvetica).
 */
export function scanPdf(pages: Array<string[] | { text: string[] }>): Buffer {
  const objects: Buffer[] = [];
  const add = (body: Buffer | string): number => objects.push(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add(''); // the page tree, written once the kids are known
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const kids: number[] = [];
  for (const lines of pages) {
    if (!Array.isArray(lines)) {
      const shown = lines.text.map((l) => `(${l.replace(/[\\()]/g, '\\$&')}) Tj T*`);
      const draw = `BT /F1 11 Tf 14 TL 72 740 Td ${shown.join(' ')} ET`;
      const content = add(`<< /Length ${draw.length} >>\nstream\n${draw}\nendstream`);
      kids.push(add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`));
      continue;
    }
    const jpeg = textImage(lines, 'jpeg');
    const sof = sofOffset(jpeg);
    const height = jpeg.readUInt16BE(sof + 5);
    const width = jpeg.readUInt16BE(sof + 7);
    const ptW = (width * 72) / 200;
    const ptH = (height * 72) / 200;
    const image = add(
      Buffer.concat([
        Buffer.from(
          `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length ${jpeg.length} >>\nstream\n`,
          'latin1',
        ),
        jpeg,
        Buffer.from('\nendstream', 'latin1'),
      ]),
    );
    const draw = `q ${ptW} 0 0 ${ptH} 0 0 cm /Im0 Do Q`;
    const content = add(`<< /Length ${draw.length} >>\nstream\n${draw}\nendstream`);
    kids.push(add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${ptW} ${ptH}] /Resources << /XObject << /Im0 ${image} 0 R >> >> /Contents ${content} 0 R >>`));
  }
  objects[1] = Buffer.from(`<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`, 'latin1');
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(length);
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, 'latin1'), body, Buffer.from('\nendobj\n', 'latin1')]);
    parts.push(obj);
    length += obj.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts);
}

/**
 * A one-page PDF whose only image claims `width` × `height` pixels (its data is a few bytes of
 * grey): what a reader would allocate for it is width × height × 4 bytes.
 */
export function pdfWithClaimedImage(width: number, height: number): Buffer {
  const pixels = Buffer.alloc(64, 0x80);
  const draw = 'q 612 0 0 792 0 0 cm /Im0 Do Q';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>',
    `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Length ${pixels.length} >>\nstream\n${pixels.toString('latin1')}\nendstream`,
    `<< /Length ${draw.length} >>\nstream\n${draw}\nendstream`,
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  return Buffer.from(`${out}${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${out.length}\n%%EOF\n`, 'latin1');
}

/** Offset of the JPEG's SOF0 marker. */
function sofOffset(jpeg: Buffer): number {
  let at = 2;
  while (at < jpeg.length) {
    const marker = jpeg[at + 1]!;
    if (marker >= 0xc0 && marker <= 0xc2) return at;
    at += 2 + jpeg.readUInt16BE(at + 2);
  }
  throw new Error('no SOF marker in the generated JPEG');
}
