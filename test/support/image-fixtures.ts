/**
 * Images for tests, made in code: small valid ones and hostile ones (a PNG header claiming a huge
 * size, a GIF with thousands of frames). Real images from other encoders: test/fixtures/images/.
 */
import { readFileSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A PNG whose header says `width` × `height` (RGB, 8 bits), every chunk with a correct CRC. Its
 * pixel data is real for small sizes; for a huge claim it is one row's worth (the header lies).
 */
export function png(width: number, height: number, rgb: [number, number, number] = [200, 30, 30]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const rows = Math.min(height, 64);
  const cols = Math.min(width, 64);
  const raw = Buffer.alloc(rows * (1 + cols * 3));
  for (let y = 0; y < rows; y++) for (let x = 0; x < cols; x++) raw.set(rgb, y * (1 + cols * 3) + 1 + x * 3);
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

/** A GIF89a of 1 × 1 px with `frames` frames (each a tiny LZW image). */
export function gifWithFrames(frames: number): Buffer {
  const header = Buffer.from([...Buffer.from('GIF89a', 'ascii'), 1, 0, 1, 0, 0x00, 0, 0]);
  const frame = Buffer.from([0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0x00, 0x02, 0x02, 0x4c, 0x01, 0x00]);
  return Buffer.concat([header, ...Array.from({ length: frames }, () => frame), Buffer.from([0x3b])]);
}

const FIXTURES = new URL('../fixtures/images/', import.meta.url);

/** A real image of the fixtures folder (16 × 16 px): png, jpg, gif or webp. */
export function fixtureImage(ext: 'png' | 'jpg' | 'gif' | 'webp'): Buffer {
  return readFileSync(new URL(`python.${ext}`, FIXTURES));
}

/** The fixture JPEG cut before its end (its last scan and EOI missing). */
export function truncatedJpeg(): Buffer {
  const b = fixtureImage('jpg');
  return b.subarray(0, b.length - 40);
}
