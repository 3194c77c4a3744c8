/**
 * The ZIP reader of DOCX ingestion. An upload is read strictly, in one layout only: members from
 * byte 0, then the central directory, then the end record, whose comment ends the file; one disk,
 * no ZIP64, no encryption, stored or deflate, each local header agreeing with its directory
 * entry (sizes and CRC in a data descriptor when the header defers them), no two members of one
 * name, none overlapping. Anything else is refused as damaged.
 *
 * Every member is then inflated here, by zlib with `maxOutputLength` (it stops at the cap rather
 * than allocate a bomb's output), and must match its directory entry's size and CRC. The document
 * reader is handed a new archive built from those checked bytes (storedZip), never the upload:
 * JSZip, under mammoth, finds a directory after prepended or before appended bytes, reads ZIP64
 * and inflates truncated streams, so it is given nothing but what was measured.
 */
import { crc32, inflateRawSync } from 'node:zlib';
import { IngestError } from './errors.js';
import { sanitizeFilename } from './filename.js';
import { formatBytes, overLimit, type IngestLimits } from './limits.js';

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflate (nothing else is read). */
  method: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
  localOffset: number;
  /** Where the member's data starts (after its local header). */
  dataStart: number;
}

/** A member's checked, inflated bytes. */
export interface ZipMember {
  name: string;
  data: Uint8Array;
  crc: number;
}

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_END = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_DESCRIPTOR = 0x08074b50;
const U16 = 0xffff;
const U32 = 0xffffffff;
const FLAG_ENCRYPTED = 0x0001;
const FLAG_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;

/** The archive is not in the one layout this reader accepts; `problem` says why, for people. */
class ZipLayoutError extends Error {}

const utf8 = new TextDecoder('utf-8');

/** Entries of a well-formed archive, or undefined (type detection: see readZipLayout for the rule). */
export function readZipDirectory(b: Uint8Array): ZipEntry[] | undefined {
  try {
    return readZipLayout(b);
  } catch (err) {
    if (err instanceof ZipLayoutError) return undefined;
    throw err;
  }
}

function readZipLayout(b: Uint8Array): ZipEntry[] {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const u16 = (at: number): number => view.getUint16(at, true);
  const u32 = (at: number): number => view.getUint32(at, true);
  const bad = (problem: string): never => {
    throw new ZipLayoutError(problem);
  };

  // The last end-record signature, as JSZip looks for it; its comment must end the file.
  let end = -1;
  for (let i = b.length - 22; i >= 0; i--) {
    if (b[i] === 0x50 && u32(i) === SIG_END) {
      end = i;
      break;
    }
  }
  if (end < 0) bad('it has no ZIP directory (it may be truncated)');
  if (end + 22 + u16(end + 20) !== b.length) bad('bytes follow the end of the archive');
  if (u16(end + 4) !== 0 || u16(end + 6) !== 0 || u16(end + 8) !== u16(end + 10)) bad('it spans several disks');
  const count = u16(end + 10);
  const dirSize = u32(end + 12);
  const dirOffset = u32(end + 16);
  if (count === U16 || dirSize === U32 || dirOffset === U32 || (end >= 20 && u32(end - 20) === SIG_ZIP64_LOCATOR)) {
    bad('it is a ZIP64 archive');
  }
  if (dirOffset + dirSize !== end) bad('its directory is not where its end record says (bytes were added before it?)');

  const entries: ZipEntry[] = [];
  const centralNames: Uint8Array[] = [];
  let p = dirOffset;
  for (let n = 0; n < count; n++) {
    if (p + 46 > end || u32(p) !== SIG_CENTRAL) bad('its directory is damaged');
    const flags = u16(p + 8);
    const nameLen = u16(p + 28);
    const nameBytes = b.subarray(p + 46, p + 46 + nameLen);
    const entry: ZipEntry = {
      name: utf8.decode(nameBytes),
      method: u16(p + 10),
      crc: u32(p + 16),
      compressedSize: u32(p + 20),
      uncompressedSize: u32(p + 24),
      localOffset: u32(p + 42),
      dataStart: 0,
    };
    const shown = entry.name.slice(0, 100);
    if (u16(p + 34) !== 0) bad('it spans several disks');
    if (entry.compressedSize === U32 || entry.uncompressedSize === U32 || entry.localOffset === U32) bad('it is a ZIP64 archive');
    if (flags & FLAG_ENCRYPTED) bad(`its member ${shown} is encrypted`);
    if (entry.method !== 0 && entry.method !== 8) bad(`its member ${shown} uses compression method ${entry.method}, which is not supported`);
    p += 46 + nameLen + u16(p + 30) + u16(p + 32);
    entries.push(entry);
    centralNames.push(nameBytes);
  }
  if (p !== end) bad('its directory is damaged');

  const names = new Set<string>();
  for (const e of entries) {
    if (names.has(e.name)) bad(`two of its members are named ${e.name.slice(0, 100)}`);
    names.add(e.name);
  }

  // Local headers, in file order: the first at byte 0, each right after the previous member.
  const order = entries.map((e, i) => i).sort((x, y) => entries[x]!.localOffset - entries[y]!.localOffset);
  let next = 0;
  for (const i of order) {
    const e = entries[i]!;
    const at = e.localOffset;
    const shown = e.name.slice(0, 100);
    if (at !== next) bad(next === 0 ? 'bytes come before its first member' : at < next ? 'its members overlap' : 'bytes lie between its members');
    if (at + 30 > dirOffset || u32(at) !== SIG_LOCAL) bad(`the local header of its member ${shown} is missing`);
    const flags = u16(at + 6);
    const nameLen = u16(at + 26);
    const localName = b.subarray(at + 30, at + 30 + nameLen);
    const sameName = nameLen === centralNames[i]!.length && localName.every((c, k) => c === centralNames[i]![k]);
    if (!sameName || u16(at + 8) !== e.method || (flags & FLAG_ENCRYPTED) !== 0) bad(`the local header of its member ${shown} disagrees with the directory`);
    e.dataStart = at + 30 + nameLen + u16(at + 28);
    let memberEnd = e.dataStart + e.compressedSize;
    if (flags & FLAG_DESCRIPTOR) {
      memberEnd += descriptorLength(memberEnd, e) ?? bad(`the data descriptor of its member ${shown} disagrees with the directory`);
    } else if (u32(at + 14) !== e.crc || u32(at + 18) !== e.compressedSize || u32(at + 22) !== e.uncompressedSize) {
      bad(`the local header of its member ${shown} disagrees with the directory`);
    }
    if (memberEnd > dirOffset) bad(`its member ${shown} runs into the directory`);
    next = memberEnd;
  }
  if (next !== dirOffset) bad('bytes lie between its members and its directory');
  return entries;

  /** 16 or 12 (with or without its signature) when the descriptor at `at` matches the entry. */
  function descriptorLength(at: number, e: ZipEntry): number | undefined {
    const matches = (p: number): boolean => p + 12 <= dirOffset && u32(p) === e.crc && u32(p + 4) === e.compressedSize && u32(p + 8) === e.uncompressedSize;
    if (at + 4 <= dirOffset && u32(at) === SIG_DESCRIPTOR && matches(at + 4)) return 16;
    return matches(at) ? 12 : undefined;
  }
}

type InflateLimits = Pick<IngestLimits, 'maxInflatedMemberBytes' | 'maxInflatedTotalBytes'>;

/**
 * Every member of a DOCX (ZIP) upload, inflated and checked. Throws IngestError corrupt (400)
 * when the archive is not in the accepted layout or a member does not match its directory
 * entry, and too_large (413) when a member inflates beyond maxInflatedMemberBytes or all of
 * them together beyond maxInflatedTotalBytes (declared sizes are refused before inflating,
 * real ones are measured while inflating: neither is trusted alone).
 */
export function readZipMembers(b: Uint8Array, filename: string, limits: InflateLimits): ZipMember[] {
  const name = sanitizeFilename(filename);
  const damaged = (problem: string): IngestError => new IngestError('corrupt', filename, `"${name}" could not be read as a Word document: ${problem}.`);
  let entries: ZipEntry[];
  try {
    entries = readZipLayout(b);
  } catch (err) {
    if (err instanceof ZipLayoutError) throw damaged(err.message);
    throw err;
  }
  const memberOver = (e: ZipEntry): IngestError =>
    overLimit(
      filename,
      `has a member (${e.name.slice(0, 100)}) that inflates to more than ${formatBytes(limits.maxInflatedMemberBytes)}`,
      `${formatBytes(limits.maxInflatedMemberBytes)} per member`,
      'maxInflatedMemberBytes',
    );
  const totalOver = (): IngestError =>
    overLimit(
      filename,
      `inflates to more than ${formatBytes(limits.maxInflatedTotalBytes)} in total`,
      `${formatBytes(limits.maxInflatedTotalBytes)} per archive`,
      'maxInflatedTotalBytes',
    );

  let declared = 0;
  for (const e of entries) {
    if (e.uncompressedSize > limits.maxInflatedMemberBytes) throw memberOver(e);
    declared += e.uncompressedSize;
    if (declared > limits.maxInflatedTotalBytes) throw totalOver();
  }

  const members: ZipMember[] = [];
  let total = 0;
  for (const e of entries) {
    const raw = b.subarray(e.dataStart, e.dataStart + e.compressedSize);
    const room = Math.min(limits.maxInflatedMemberBytes, limits.maxInflatedTotalBytes - total);
    let data: Uint8Array;
    if (e.method === 0) {
      data = raw;
    } else {
      try {
        data = inflateRawSync(raw, { maxOutputLength: room + 1 });
      } catch (err) {
        if ((err as { code?: string }).code !== 'ERR_BUFFER_TOO_LARGE') throw damaged(`its member ${e.name.slice(0, 100)} does not inflate`);
        throw room < limits.maxInflatedMemberBytes ? totalOver() : memberOver(e);
      }
    }
    if (data.length > limits.maxInflatedMemberBytes) throw memberOver(e);
    total += data.length;
    if (total > limits.maxInflatedTotalBytes) throw totalOver();
    const crc = crc32(data);
    if (data.length !== e.uncompressedSize || crc !== e.crc)
      throw damaged(`its member ${e.name.slice(0, 100)} does not match its directory entry (size or checksum)`);
    members.push({ name: e.name, data, crc });
  }
  return members;
}

/** A ZIP archive of the members, stored (not compressed), names in UTF-8: what the document reader reads. */
export function storedZip(members: readonly ZipMember[]): Buffer {
  const encoder = new TextEncoder();
  const names = members.map((m) => encoder.encode(m.name));
  const dataSize = members.reduce((n, m, i) => n + 30 + names[i]!.length + m.data.length, 0);
  const dirSize = names.reduce((n, name) => n + 46 + name.length, 0);
  const out = Buffer.alloc(dataSize + dirSize + 22);
  let p = 0;
  const offsets: number[] = [];
  members.forEach((m, i) => {
    offsets.push(p);
    out.writeUInt32LE(SIG_LOCAL, p);
    out.writeUInt16LE(10, p + 4);
    out.writeUInt16LE(FLAG_UTF8, p + 6);
    out.writeUInt32LE(m.crc, p + 14);
    out.writeUInt32LE(m.data.length, p + 18);
    out.writeUInt32LE(m.data.length, p + 22);
    out.writeUInt16LE(names[i]!.length, p + 26);
    out.set(names[i]!, p + 30);
    out.set(m.data, p + 30 + names[i]!.length);
    p += 30 + names[i]!.length + m.data.length;
  });
  members.forEach((m, i) => {
    out.writeUInt32LE(SIG_CENTRAL, p);
    out.writeUInt16LE(20, p + 4);
    out.writeUInt16LE(10, p + 6);
    out.writeUInt16LE(FLAG_UTF8, p + 8);
    out.writeUInt32LE(m.crc, p + 16);
    out.writeUInt32LE(m.data.length, p + 20);
    out.writeUInt32LE(m.data.length, p + 24);
    out.writeUInt16LE(names[i]!.length, p + 28);
    out.writeUInt32LE(offsets[i]!, p + 42);
    out.set(names[i]!, p + 46);
    p += 46 + names[i]!.length;
  });
  out.writeUInt32LE(SIG_END, p);
  out.writeUInt16LE(members.length, p + 8);
  out.writeUInt16LE(members.length, p + 10);
  out.writeUInt32LE(dirSize, p + 12);
  out.writeUInt32LE(dataSize, p + 16);
  return out;
}
