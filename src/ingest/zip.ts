/**
 * Just enough of the ZIP format to name an archive's members (type detection) and to measure
 * what they really inflate to (the DOCX caps) before a ZIP library is allowed near them. Sizes
 * declared in the directory can lie, so members are actually inflated — by zlib with
 * `maxOutputLength`, which stops at the cap instead of allocating a bomb's full output.
 */
import { inflateRawSync } from 'node:zlib';
import { formatBytes, overLimit, type IngestLimits } from './limits.js';

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflate; anything else is left to the document reader to reject. */
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  localOffset: number;
}

const latin1 = new TextDecoder('latin1');
const ZIP64_MARK = 0xffffffff;

/**
 * Entries of the ZIP central directory, or undefined when the end-of-central-directory record
 * cannot be found or the directory is out of bounds (truncated file).
 */
export function readZipDirectory(b: Uint8Array): ZipEntry[] | undefined {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const minEocd = Math.max(0, b.length - 22 - 0xffff);
  for (let i = b.length - 22; i >= minEocd; i--) {
    if (b[i] !== 0x50 || view.getUint32(i, true) !== 0x06054b50) continue;
    const count = view.getUint16(i + 10, true);
    const size = view.getUint32(i + 12, true);
    const offset = view.getUint32(i + 16, true);
    if (offset + size > i) return undefined;
    const entries: ZipEntry[] = [];
    let p = offset;
    for (let n = 0; n < count; n++) {
      if (p + 46 > b.length || view.getUint32(p, true) !== 0x02014b50) return undefined;
      const nameLen = view.getUint16(p + 28, true);
      const extraLen = view.getUint16(p + 30, true);
      const commentLen = view.getUint16(p + 32, true);
      entries.push({
        name: latin1.decode(b.subarray(p + 46, p + 46 + nameLen)),
        method: view.getUint16(p + 10, true),
        compressedSize: view.getUint32(p + 20, true),
        uncompressedSize: view.getUint32(p + 24, true),
        localOffset: view.getUint32(p + 42, true),
      });
      p += 46 + nameLen + extraLen + commentLen;
    }
    return entries;
  }
  return undefined;
}

type InflateLimits = Pick<IngestLimits, 'maxInflatedMemberBytes' | 'maxInflatedTotalBytes'>;

/**
 * Throws IngestError too_large when a member inflates beyond maxInflatedMemberBytes or all of
 * them together beyond maxInflatedTotalBytes. Members that cannot be located or inflated are
 * skipped: the document reader reports the archive as damaged.
 */
export function checkInflatedSizes(b: Uint8Array, filename: string, limits: InflateLimits): void {
  const entries = readZipDirectory(b);
  if (!entries) return;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let total = 0;
  for (const e of entries) {
    const p = e.localOffset;
    if (p + 30 > b.length || view.getUint32(p, true) !== 0x04034b50) continue;
    const dataStart = p + 30 + view.getUint16(p + 26, true) + view.getUint16(p + 28, true);
    if (dataStart > b.length) continue;
    // ZIP64 sizes live in an extra field; inflation stops at the end of the deflate stream anyway.
    const dataEnd = e.compressedSize === ZIP64_MARK ? b.length : Math.min(b.length, dataStart + e.compressedSize);
    const room = Math.min(limits.maxInflatedMemberBytes, limits.maxInflatedTotalBytes - total);
    let size: number;
    if (e.method === 0) {
      size = dataEnd - dataStart;
    } else if (e.method === 8) {
      try {
        size = inflateRawSync(b.subarray(dataStart, dataEnd), { maxOutputLength: Math.max(1, room + 1) }).byteLength;
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') size = room + 1;
        else continue;
      }
    } else {
      continue;
    }
    if (size > limits.maxInflatedMemberBytes) {
      throw overLimit(filename, `has a member (${e.name.slice(0, 100)}) that inflates to more than ${formatBytes(limits.maxInflatedMemberBytes)}`, `${formatBytes(limits.maxInflatedMemberBytes)} per member`, 'maxInflatedMemberBytes');
    }
    total += size;
    if (total > limits.maxInflatedTotalBytes) {
      throw overLimit(filename, `inflates to more than ${formatBytes(limits.maxInflatedTotalBytes)} in total`, `${formatBytes(limits.maxInflatedTotalBytes)} per archive`, 'maxInflatedTotalBytes');
    }
  }
}
