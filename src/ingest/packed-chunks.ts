/**
 * A document's chunks as the ingestion worker hands them to the main thread: every text in one
 * UTF-8 buffer, the numbers in typed arrays, all transferred (moved, not copied). A structured
 * copy of 19,000 chunks (36 MB of strings) was deserialised on the main thread in one piece, and
 * those strings, alive through the whole upload, made every young-generation collection copy them
 * (50–75 ms pauses, back to back). Packed, they stay outside the JavaScript heap until a chunk is
 * read (`ChunkReader.at`): a batch at a time, as the store writes them, into short-lived strings.
 */
import type { Chunk } from './chunk.js';

export interface PackedChunks {
  /** each chunk's text then its processed text, UTF-8, one after another */
  bytes: Uint8Array;
  /** per chunk two byte offsets into `bytes`: where its text ends, where its processed text ends */
  ends: Int32Array;
  index: Int32Array;
  tokenSize: Int32Array;
  /** short (a chunk's section headings), copied with the message */
  headings: Array<string | null>;
}

/** A chunk as the store takes it (NewFile's). */
export interface ChunkRow {
  idx: number;
  fileData: string;
  fileDataProcessed: string;
  tokenSize: number;
  heading: string | null;
}

/** Pack chunks (in the worker) and the buffers to transfer with them. */
export function packChunks(chunks: readonly Chunk[]): { packed: PackedChunks; transfer: ArrayBuffer[] } {
  const encoder = new TextEncoder();
  let size = 0;
  for (const c of chunks) size += Buffer.byteLength(c.text) + Buffer.byteLength(c.processed);
  const bytes = new Uint8Array(size);
  const ends = new Int32Array(chunks.length * 2);
  const index = new Int32Array(chunks.length);
  const tokenSize = new Int32Array(chunks.length);
  let at = 0;
  chunks.forEach((c, i) => {
    at += encoder.encodeInto(c.text, bytes.subarray(at)).written;
    ends[2 * i] = at;
    at += encoder.encodeInto(c.processed, bytes.subarray(at)).written;
    ends[2 * i + 1] = at;
    index[i] = c.index;
    tokenSize[i] = c.tokenSize;
  });
  const packed = { bytes, ends, index, tokenSize, headings: chunks.map((c) => c.heading) };
  return { packed, transfer: [bytes.buffer, ends.buffer, index.buffer, tokenSize.buffer] as ArrayBuffer[] };
}

const decoder = new TextDecoder();

/** Packed chunks read one at a time (each read decodes its two texts anew: read each once). */
export class ChunkReader {
  constructor(private readonly p: PackedChunks) {}

  get length(): number {
    return this.p.index.length;
  }

  at(i: number): ChunkRow | undefined {
    if (i < 0 || i >= this.length) return undefined;
    const start = i === 0 ? 0 : this.p.ends[2 * i - 1]!;
    const mid = this.p.ends[2 * i]!;
    const end = this.p.ends[2 * i + 1]!;
    return {
      idx: this.p.index[i]!,
      fileData: decoder.decode(this.p.bytes.subarray(start, mid)),
      fileDataProcessed: decoder.decode(this.p.bytes.subarray(mid, end)),
      tokenSize: this.p.tokenSize[i]!,
      heading: this.p.headings[i] ?? null,
    };
  }
}
