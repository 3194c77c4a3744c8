import { describe, expect, it } from 'vitest';
import type { Chunk } from '../../src/ingest/chunk.js';
import { ChunkReader, packChunks } from '../../src/ingest/packed-chunks.js';

describe('packed chunks', () => {
  it('give back every chunk as it was: multi-byte text, empty texts, headings or none', () => {
    const chunks: Chunk[] = [
      { index: 0, text: 'Café — naïve “quotes” 日本語 🙂', processed: 'cafe naive quotes 日本語', tokenSize: 12, heading: '# Menu' },
      { index: 1, text: '', processed: '', tokenSize: 0, heading: null },
      { index: 7, text: 'plain\nlines\r\n', processed: 'plain lines', tokenSize: 3, heading: null },
    ];
    const { packed, transfer } = packChunks(chunks);
    // what the worker moves to the main thread: the buffers, none of them shared
    expect(transfer).toHaveLength(4);
    expect(new Set(transfer).size).toBe(4);
    const copy = structuredClone(packed, { transfer });
    expect(packed.bytes.byteLength).toBe(0); // moved, not copied
    const reader = new ChunkReader(copy);
    expect(reader.length).toBe(3);
    expect(Array.from({ length: reader.length }, (_, i) => reader.at(i))).toEqual(
      chunks.map((c) => ({ idx: c.index, fileData: c.text, fileDataProcessed: c.processed, tokenSize: c.tokenSize, heading: c.heading })),
    );
    expect([reader.at(-1), reader.at(3)]).toEqual([undefined, undefined]);
  });

  it('pack no chunks', () => {
    const { packed } = packChunks([]);
    expect(new ChunkReader(packed).length).toBe(0);
  });
});
