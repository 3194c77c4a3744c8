/**
 * What an image really is, read from its bytes (never from the type a client declares): PNG, JPEG,
 * WebP or GIF, its dimensions and frames, checked structurally to the end. Runs in the image
 * worker (worker.ts), never on the event loop.
 *
 * `image-size` reads the dimensions from the header; the walkers below then check the whole file:
 * PNG chunks with their CRCs up to IEND (APNG frames from acTL), JPEG segments and entropy-coded
 * data up to EOI, GIF blocks and sub-blocks up to the trailer (each frame counted and bounded),
 * WebP's RIFF size and chunks (animation frames counted). A file cut short or inconsistent is
 * `corrupt`; one whose header dimensions or frame count exceed the limits is `too_large` as soon
 * as the header or frame is read, before the rest is walked.
 */
import { crc32 } from 'node:zlib';
import { imageSize } from 'image-size';
import { IMAGE_LIMITS, ImageError, type ImageInfo, type ImageLimits, type ImageMime } from './types.js';

const corrupt = (what: string) => new ImageError('corrupt', `The image is damaged or cut short (${what})`);

/** The type by magic bytes; null when none of the four. */
export function sniffImage(b: Uint8Array): ImageMime | null {
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 && b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a)
    return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 6 && ascii(b, 0, 6) === 'GIF87a') return 'image/gif';
  if (b.length >= 6 && ascii(b, 0, 6) === 'GIF89a') return 'image/gif';
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP') return 'image/webp';
  return null;
}

/** Reads and checks an image; throws ImageError. */
export function inspectImage(bytes: Uint8Array, limits: ImageLimits = IMAGE_LIMITS): ImageInfo {
  if (bytes.length > limits.maxBytes) throw new ImageError('too_large', `An image may have at most ${limits.maxBytes} bytes`);
  const mimeType = sniffImage(bytes);
  if (!mimeType) throw new ImageError('unsupported', 'Not a PNG, JPEG, WebP or GIF image');
  let header: { width?: number | undefined; height?: number | undefined; type?: string | undefined };
  try {
    header = imageSize(bytes);
  } catch {
    throw corrupt('unreadable header');
  }
  const width = header.width ?? 0;
  const height = header.height ?? 0;
  if (width < 1 || height < 1) throw corrupt('no dimensions');
  checkSide(width, height, limits);
  const frames = walk(mimeType, bytes, limits, { width, height });
  return { mimeType, width, height, frames };
}

function checkSide(width: number, height: number, limits: ImageLimits): void {
  if (width > limits.maxSide || height > limits.maxSide) {
    throw new ImageError('too_large', `An image may be at most ${limits.maxSide} pixels a side (this one is ${width} × ${height})`);
  }
}

function checkFrames(n: number, limits: ImageLimits): void {
  if (n > limits.maxFrames) throw new ImageError('too_large', `An animated image may have at most ${limits.maxFrames} frames`);
}

function walk(mime: ImageMime, b: Uint8Array, limits: ImageLimits, size: { width: number; height: number }): number {
  switch (mime) {
    case 'image/png':
      return walkPng(b, limits, size);
    case 'image/jpeg':
      return walkJpeg(b, size);
    case 'image/gif':
      return walkGif(b, limits);
    case 'image/webp':
      return walkWebp(b, limits);
  }
}

function ascii(b: Uint8Array, at: number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(b[at + i]!);
  return s;
}

const u32be = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + (b[i + 1]! << 16) + (b[i + 2]! << 8) + b[i + 3]!;
const u16be = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const u16le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const u24le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const u32le = (b: Uint8Array, i: number) => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;

/** PNG: IHDR first, every chunk whole with a matching CRC, at least one IDAT, then IEND. */
function walkPng(b: Uint8Array, limits: ImageLimits, size: { width: number; height: number }): number {
  let at = 8;
  let frames = 1;
  let sawData = false;
  let first = true;
  while (at + 12 <= b.length) {
    const len = u32be(b, at);
    const type = ascii(b, at + 4, 4);
    if (at + 12 + len > b.length) throw corrupt(`PNG chunk ${type} cut short`);
    const crc = u32be(b, at + 8 + len);
    if (crc32(b.subarray(at + 4, at + 8 + len)) !== crc) throw corrupt(`PNG chunk ${type} fails its checksum`);
    if (first) {
      if (type !== 'IHDR' || len !== 13) throw corrupt('PNG without IHDR');
      if (u32be(b, at + 8) !== size.width || u32be(b, at + 12) !== size.height) throw corrupt('PNG header disagrees');
      first = false;
    }
    if (type === 'acTL' && len >= 8) {
      frames = u32be(b, at + 8);
      checkFrames(frames, limits);
    }
    if (type === 'IDAT') sawData = true;
    if (type === 'IEND') {
      if (!sawData) throw corrupt('PNG without image data');
      return Math.max(1, frames);
    }
    at += 12 + len;
  }
  throw corrupt('PNG without IEND');
}

/** JPEG: segments with their lengths, a frame header before the first scan, scan data up to EOI. */
function walkJpeg(b: Uint8Array, size: { width: number; height: number }): number {
  let at = 2;
  let sawFrame = false;
  while (at < b.length) {
    if (b[at] !== 0xff) throw corrupt('JPEG marker expected');
    while (at < b.length && b[at] === 0xff) at++; // fill bytes
    if (at >= b.length) break;
    const marker = b[at++]!;
    if (marker === 0xd9) {
      if (!sawFrame) throw corrupt('JPEG without a frame');
      return 1;
    }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue;
    if (at + 2 > b.length) break;
    const len = u16be(b, at);
    if (len < 2 || at + len > b.length) throw corrupt('JPEG segment cut short');
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (len < 8) throw corrupt('JPEG frame header too short');
      const h = u16be(b, at + 3);
      const w = u16be(b, at + 5);
      if (w !== size.width || (h !== 0 && h !== size.height)) throw corrupt('JPEG header disagrees');
      sawFrame = true;
    }
    at += len;
    if (marker === 0xda) {
      if (!sawFrame) throw corrupt('JPEG scan before its frame');
      // Entropy-coded data: ends at a marker other than a stuffed 0xFF00 or a restart marker.
      while (at + 1 < b.length && !(b[at] === 0xff && b[at + 1] !== 0x00 && !(b[at + 1]! >= 0xd0 && b[at + 1]! <= 0xd7))) at++;
      if (at + 1 >= b.length) break;
    }
  }
  throw corrupt('JPEG without its end marker');
}

/** GIF: the screen descriptor and colour table, then blocks up to the trailer; each frame counted and bounded. */
function walkGif(b: Uint8Array, limits: ImageLimits): number {
  if (b.length < 13) throw corrupt('GIF header cut short');
  let at = 13;
  const flags = b[10]!;
  if (flags & 0x80) at += 3 * (1 << ((flags & 0x07) + 1));
  let frames = 0;
  const subBlocks = () => {
    for (;;) {
      if (at >= b.length) throw corrupt('GIF data cut short');
      const n = b[at++]!;
      if (n === 0) return;
      at += n;
    }
  };
  while (at < b.length) {
    const block = b[at++]!;
    if (block === 0x3b) {
      if (frames === 0) throw corrupt('GIF without a frame');
      return frames;
    }
    if (block === 0x21) {
      at++; // label
      subBlocks();
    } else if (block === 0x2c) {
      if (at + 9 > b.length) throw corrupt('GIF frame header cut short');
      checkSide(u16le(b, at + 4), u16le(b, at + 6), limits);
      const f = b[at + 8]!;
      at += 9;
      if (f & 0x80) at += 3 * (1 << ((f & 0x07) + 1));
      at++; // LZW minimum code size
      subBlocks();
      checkFrames(++frames, limits);
    } else throw corrupt('unknown GIF block');
  }
  throw corrupt('GIF without its trailer');
}

/** WebP: RIFF size within the file, chunks whole, a bitstream (VP8, VP8L) or animation frames (ANMF). */
function walkWebp(b: Uint8Array, limits: ImageLimits): number {
  const riffEnd = 8 + u32le(b, 4);
  if (riffEnd > b.length) throw corrupt('WebP cut short');
  let at = 12;
  let frames = 0;
  let image = false;
  while (at + 8 <= riffEnd) {
    const type = ascii(b, at, 4);
    const len = u32le(b, at + 4);
    const data = at + 8;
    if (data + len > riffEnd) throw corrupt(`WebP chunk ${type.trim()} cut short`);
    if (type === 'VP8 ') {
      if (len < 10 || b[data + 3] !== 0x9d || b[data + 4] !== 0x01 || b[data + 5] !== 0x2a) throw corrupt('bad VP8 header');
      image = true;
    } else if (type === 'VP8L') {
      if (len < 5 || b[data] !== 0x2f) throw corrupt('bad VP8L header');
      image = true;
    } else if (type === 'ANMF') {
      if (len < 16) throw corrupt('bad WebP frame');
      checkSide(u24le(b, data + 6) + 1, u24le(b, data + 9) + 1, limits);
      checkFrames(++frames, limits);
      image = true;
    }
    at = data + len + (len & 1);
  }
  if (!image) throw corrupt('WebP without image data');
  return Math.max(1, frames);
}
