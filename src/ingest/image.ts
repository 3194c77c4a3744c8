/**
 * The size of a scanned image, read from its header before anything decodes it: PNG (IHDR),
 * JPEG (the first SOFn marker), TIFF (the first image directory) and WebP (VP8, VP8L or VP8X).
 * The OCR step refuses an image over the pixel cap from this alone, so a header claiming
 * 100,000 × 100,000 px costs a few bytes of reading, never a decode. A header that cannot be
 * read is a damaged image (corrupt, 400).
 */

export type ImageFormat = 'png' | 'jpeg' | 'tiff' | 'webp';

export interface ImageSize {
  width: number;
  height: number;
}

const u16be = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;
const u32be = (b: Uint8Array, at: number): number => ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;
const u16le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8);
const u24le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
const u32le = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + ((b[at + 3]! << 24) >>> 0);

/** Width and height from the header, or undefined when the header is missing or truncated. */
export function imageSize(bytes: Uint8Array, format: ImageFormat): ImageSize | undefined {
  const size = read(bytes, format);
  return size && size.width > 0 && size.height > 0 ? size : undefined;
}

function read(b: Uint8Array, format: ImageFormat): ImageSize | undefined {
  switch (format) {
    case 'png':
      // signature (8), IHDR length (4), "IHDR" (4), width (4), height (4)
      return b.length >= 24 ? { width: u32be(b, 16), height: u32be(b, 20) } : undefined;
    case 'jpeg':
      return jpegSize(b);
    case 'tiff':
      return tiffSize(b);
    case 'webp':
      return webpSize(b);
  }
}

function jpegSize(b: Uint8Array): ImageSize | undefined {
  let at = 2;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2; // markers without a length
      continue;
    }
    const length = u16be(b, at + 2);
    // SOF0–SOF15 except DHT (c4), JPG (c8) and DAC (cc): precision (1), height (2), width (2)
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return at + 9 <= b.length ? { height: u16be(b, at + 5), width: u16be(b, at + 7) } : undefined;
    }
    if (length < 2) return undefined;
    at += 2 + length;
  }
  return undefined;
}

function tiffSize(b: Uint8Array): ImageSize | undefined {
  if (b.length < 8) return undefined;
  const le = b[0] === 0x49;
  const u16 = le ? u16le : u16be;
  const u32 = le ? u32le : u32be;
  const ifd = u32(b, 4);
  if (ifd + 2 > b.length) return undefined;
  const count = u16(b, ifd);
  let width: number | undefined;
  let height: number | undefined;
  for (let i = 0; i < count; i++) {
    const e = ifd + 2 + i * 12;
    if (e + 12 > b.length) return undefined;
    const tag = u16(b, e);
    if (tag !== 256 && tag !== 257) continue;
    const type = u16(b, e + 2);
    const value = type === 3 ? u16(b, e + 8) : u32(b, e + 8); // SHORT or LONG
    if (tag === 256) width = value;
    else height = value;
  }
  return width !== undefined && height !== undefined ? { width, height } : undefined;
}

function webpSize(b: Uint8Array): ImageSize | undefined {
  if (b.length < 30) return undefined;
  const chunk = String.fromCharCode(b[12]!, b[13]!, b[14]!, b[15]!);
  if (chunk === 'VP8X') return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  if (chunk === 'VP8L') {
    if (b[20] !== 0x2f) return undefined;
    const bits = u32le(b, 21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8 ') {
    // frame tag (3), start code 9d 01 2a, then 14-bit width and height
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return undefined;
    return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  }
  return undefined;
}
