/**
 * ZIP archives laid out the ways a lenient reader accepts and a strict one refuses, generated at
 * test time: deflate bombs (a gigabyte in about a megabyte, made in milliseconds), bytes before
 * or after the archive, data descriptors, ZIP64 records, several disks, duplicate names, local
 * headers that disagree with the directory, truncated streams.
 */
import { constants, crc32, deflateRawSync } from 'node:zlib';

export interface RawMember {
  name: string;
  /** Raw deflate data. */
  compressed: Buffer;
  crc: number;
  size: number;
  /** Sizes and CRC deferred to a data descriptor (flag bit 3; zeros in the local header). */
  descriptor?: boolean;
  /** A local header name other than the directory's. */
  localName?: string;
}

export interface ZipLayout {
  /** Sizes and offsets in ZIP64 records (the 32-bit fields all ones). */
  zip64?: boolean;
  /** Disk number written in the end record. */
  disk?: number;
}

const MiB = 1_048_576;

/** A member deflated from `data`. */
export function member(name: string, data: string | Buffer): RawMember {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data);
  return { name, compressed: deflateRawSync(bytes), crc: crc32(bytes), size: bytes.length };
}

/**
 * A member of `size` bytes of `fill` repeated: one MiB block deflated with a full flush (so each
 * copy stands alone) repeated, then the rest as the final block. About 1 KB per MiB.
 */
export function bombMember(name: string, size: number, fill: string): RawMember {
  const block = Buffer.from(fill.repeat(Math.ceil(MiB / fill.length)).slice(0, MiB), 'latin1');
  const flushed = deflateRawSync(block, { finishFlush: constants.Z_FULL_FLUSH });
  const copies = Math.floor(size / MiB);
  const rest = block.subarray(0, size - copies * MiB);
  let crc = 0;
  for (let i = 0; i < copies; i++) crc = crc32(block, crc);
  crc = crc32(rest, crc);
  const parts: Buffer[] = Array.from({ length: copies }, () => flushed);
  parts.push(deflateRawSync(rest));
  return { name, compressed: Buffer.concat(parts), crc, size };
}

/** A ZIP archive of the members in the given layout (deflate, every member). */
export function rawZip(members: RawMember[], layout: ZipLayout = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const name = Buffer.from(m.name, 'utf8');
    const localName = Buffer.from(m.localName ?? m.name, 'utf8');
    const flags = m.descriptor ? 0x0008 : 0;
    const zip64Extra = layout.zip64 ? Buffer.alloc(28) : Buffer.alloc(0);
    if (layout.zip64) {
      zip64Extra.writeUInt16LE(0x0001, 0);
      zip64Extra.writeUInt16LE(24, 2);
      zip64Extra.writeBigUInt64LE(BigInt(m.size), 4);
      zip64Extra.writeBigUInt64LE(BigInt(m.compressed.length), 12);
      zip64Extra.writeBigUInt64LE(BigInt(offset), 20);
    }
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(layout.zip64 ? 45 : 20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(8, 8);
    if (!m.descriptor) {
      local.writeUInt32LE(m.crc >>> 0, 14);
      local.writeUInt32LE(layout.zip64 ? 0xffffffff : m.compressed.length, 18);
      local.writeUInt32LE(layout.zip64 ? 0xffffffff : m.size, 22);
    }
    local.writeUInt16LE(localName.length, 26);
    const localExtra = layout.zip64 ? Buffer.from(zip64Extra.subarray(0, 20)) : Buffer.alloc(0);
    if (layout.zip64) localExtra.writeUInt16LE(16, 2);
    local.writeUInt16LE(localExtra.length, 28);
    const descriptor = Buffer.alloc(m.descriptor ? 16 : 0);
    if (m.descriptor) {
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(m.crc >>> 0, 4);
      descriptor.writeUInt32LE(m.compressed.length, 8);
      descriptor.writeUInt32LE(m.size, 12);
    }
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(layout.zip64 ? 45 : 20, 4);
    central.writeUInt16LE(layout.zip64 ? 45 : 20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(m.crc >>> 0, 16);
    central.writeUInt32LE(layout.zip64 ? 0xffffffff : m.compressed.length, 20);
    central.writeUInt32LE(layout.zip64 ? 0xffffffff : m.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(zip64Extra.length, 30);
    central.writeUInt32LE(layout.zip64 ? 0xffffffff : offset, 42);
    locals.push(local, localName, localExtra, m.compressed, descriptor);
    centrals.push(central, name, zip64Extra);
    offset += 30 + localName.length + localExtra.length + m.compressed.length + descriptor.length;
  }
  const dir = Buffer.concat(centrals);
  const tail: Buffer[] = [];
  if (layout.zip64) {
    const end64 = Buffer.alloc(56);
    end64.writeUInt32LE(0x06064b50, 0);
    end64.writeBigUInt64LE(44n, 4);
    end64.writeUInt16LE(45, 12);
    end64.writeUInt16LE(45, 14);
    end64.writeBigUInt64LE(BigInt(members.length), 24);
    end64.writeBigUInt64LE(BigInt(members.length), 32);
    end64.writeBigUInt64LE(BigInt(dir.length), 40);
    end64.writeBigUInt64LE(BigInt(offset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(offset + dir.length), 8);
    locator.writeUInt32LE(1, 16);
    tail.push(end64, locator);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(layout.disk ?? 0, 4);
  end.writeUInt16LE(layout.disk ?? 0, 6);
  end.writeUInt16LE(layout.zip64 ? 0xffff : members.length, 8);
  end.writeUInt16LE(layout.zip64 ? 0xffff : members.length, 10);
  end.writeUInt32LE(layout.zip64 ? 0xffffffff : dir.length, 12);
  end.writeUInt32LE(layout.zip64 ? 0xffffffff : offset, 16);
  return Buffer.concat([...locals, dir, ...tail, end]);
}

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
  '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

/** The members every DOCX needs besides word/document.xml. */
export const docxFrame = (): RawMember[] => [member('[Content_Types].xml', CONTENT_TYPES), member('_rels/.rels', RELS)];

/** A word/document.xml of one paragraph. */
export const documentXml = (text: string): RawMember =>
  member(
    'word/document.xml',
    `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:body></w:document>`,
  );
