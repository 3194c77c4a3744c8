/**
 * Building one entry's postings: the chunks' stored tsvectors (text form) parsed as they are
 * added, then sealed into an EntryIndex (a counting sort by lexeme).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { EntryIndex, SKIP, type IndexedFile } from './entry-index.js';

/** Rows of one slice of a pass in `seal` (some milliseconds of work). */
const SEAL_SLICE = 50_000;

/** `work` over [0, n) in slices, in order, yielding to the event loop between them. */
async function sliced(n: number, work: (from: number, to: number) => void): Promise<void> {
  for (let from = 0; from < n; from += SEAL_SLICE) {
    if (from > 0) await nextTurn();
    work(from, Math.min(n, from + SEAL_SLICE));
  }
}

/** Elements per block of a Grow: a block is filled, then the next one made (no copy while building). */
const BLOCK = 1 << 16;

/**
 * Growable typed arrays for building, in fixed blocks: growing never copies what was added (a
 * doubling array of millions of rows copied tens of MB in one step, five of them at once).
 */
class Grow<T extends Int32Array | Uint16Array | Float64Array> {
  length = 0;
  private readonly blocks: T[] = [];
  private block: T;
  private at = 0;
  constructor(private readonly make: (n: number) => T) {
    this.block = make(BLOCK);
    this.blocks.push(this.block);
  }
  push(v: number): void {
    if (this.at === BLOCK) {
      this.block = this.make(BLOCK);
      this.blocks.push(this.block);
      this.at = 0;
    }
    this.block[this.at++] = v;
    this.length++;
  }
  /** The elements in one array (a copy: one memcpy per block); the blocks are let go, and nothing more may be added. */
  done(): T {
    const out = this.make(this.length);
    let off = 0;
    for (const b of this.blocks) {
      const n = Math.min(BLOCK, this.length - off);
      out.set(n === BLOCK ? b : (b.subarray(0, n) as T), off);
      off += n;
    }
    this.blocks.length = 0;
    this.block = this.make(0);
    return out;
  }
}

/** Weight bits of a tsvector position (WordEntryPos): A is 3, D (the default, no letter) 0. */
const WEIGHT_A = 3;

/**
 * Lexemes of chunks as they are added, in chunk order; `seal` turns them into postings.
 * A tsvector's text form is `'lexeme':1,5A 'other':2` (quote and backslash doubled in lexemes).
 */
export class IndexBuilder {
  private readonly lexId = new Map<string, number>();
  private readonly lexemes: string[] = [];
  private readonly chunkId = new Grow((n) => new Float64Array(n));
  private readonly fileSlot = new Grow((n) => new Int32Array(n));
  private readonly tokenSize = new Grow((n) => new Int32Array(n));
  // one row per (chunk, lexeme): lexeme id, chunk slot, body tf, other positions | heading bit, and its positions
  private readonly fLex = new Grow((n) => new Int32Array(n));
  private readonly fSlot = new Grow((n) => new Int32Array(n));
  private readonly fTf = new Grow((n) => new Uint16Array(n));
  private readonly fOther = new Grow((n) => new Uint16Array(n));
  private readonly fPos = new Grow((n) => new Uint16Array(n));
  private readonly fileSlots = new Map<string, number>();
  readonly files: IndexedFile[] = [];

  addFile(id: string, filename: string, tokens: number): void {
    if (this.fileSlots.has(id)) return;
    this.fileSlots.set(id, this.files.length);
    this.files.push({ id, filename, tokens });
  }

  get chunks(): number {
    return this.chunkId.length;
  }

  /** Add a chunk with its stored tsvector in text form; false when its file was not added. */
  addChunk(id: number, fileId: string, tokenSize: number, vector: string): boolean {
    const file = this.fileSlots.get(fileId);
    if (file === undefined) return false;
    const slot = this.chunkId.length;
    this.chunkId.push(id);
    this.fileSlot.push(file);
    this.tokenSize.push(tokenSize);
    const s = vector;
    let i = 0;
    while (i < s.length) {
      if (s.charCodeAt(i) !== 39 /* ' */) {
        i++;
        continue;
      }
      // the lexeme, unquoted
      let lexeme = '';
      let from = ++i;
      for (;;) {
        const c = s.charCodeAt(i);
        if (c === 39) {
          if (s.charCodeAt(i + 1) === 39) {
            lexeme += s.slice(from, i + 1);
            i += 2;
            from = i;
            continue;
          }
          lexeme += s.slice(from, i);
          i++;
          break;
        }
        if (c === 92 /* \ */) {
          lexeme += s.slice(from, i) + s[i + 1];
          i += 2;
          from = i;
          continue;
        }
        if (Number.isNaN(c)) throw new Error('unterminated lexeme in a tsvector');
        i++;
      }
      let lid = this.lexId.get(lexeme);
      if (lid === undefined) {
        lid = this.lexemes.length;
        this.lexId.set(lexeme, lid);
        this.lexemes.push(lexeme);
      }
      let tf = 0;
      let other = 0;
      let heading = false;
      if (s.charCodeAt(i) === 58 /* : */) {
        i++;
        for (;;) {
          let pos = 0;
          let c = s.charCodeAt(i);
          while (c >= 48 && c <= 57) {
            pos = pos * 10 + (c - 48);
            c = s.charCodeAt(++i);
          }
          let weight = 0;
          if (c >= 65 && c <= 68) {
            weight = 68 - c; // A 3, B 2, C 1, D 0
            c = s.charCodeAt(++i);
          }
          this.fPos.push(pos);
          if (weight === 0) tf++;
          else {
            other++;
            if (weight === WEIGHT_A) heading = true;
          }
          if (c !== 44 /* , */) break;
          i++;
        }
      }
      this.fLex.push(lid);
      this.fSlot.push(slot);
      this.fTf.push(tf);
      this.fOther.push(other | (heading ? 0x8000 : 0));
    }
    return true;
  }

  /**
   * The postings: each lexeme's chunks in chunk order (a counting sort of what was added). A
   * 100k-chunk entry has millions of rows: each pass over them runs in slices, the event loop
   * turning between them, so /healthz and chat turns are not held while an index is sealed.
   */
  async seal(plusId: string, version: number, tokens: number): Promise<EntryIndex> {
    const nLex = this.lexemes.length;
    const rows = this.fLex.length;
    // one array each, made one per turn of the event loop (each a copy of up to tens of MB)
    const fLex = this.fLex.done();
    await nextTurn();
    const fTf = this.fTf.done();
    await nextTurn();
    const fOther = this.fOther.done();
    await nextTurn();
    const fSlot = this.fSlot.done();
    await nextTurn();
    const fPos = this.fPos.done();
    const postStart = new Int32Array(nLex + 1);
    await sliced(rows, (from, to) => {
      for (let r = from; r < to; r++) postStart[fLex[r]! + 1]!++;
    });
    for (let l = 0; l < nLex; l++) postStart[l + 1]! += postStart[l]!;
    // where each row's positions start among the added ones
    const fPosStart = new Int32Array(rows + 1);
    await sliced(rows, (from, to) => {
      for (let r = from; r < to; r++) fPosStart[r + 1] = fPosStart[r]! + fTf[r]! + (fOther[r]! & 0x7fff);
    });
    const cursor = postStart.slice(0, nLex);
    const postSlot = new Int32Array(rows);
    const postTf = new Uint16Array(rows);
    const postOther = new Uint16Array(rows);
    const rowOf = new Int32Array(rows);
    await sliced(rows, (from, to) => {
      for (let r = from; r < to; r++) {
        const g = cursor[fLex[r]!]!++;
        postSlot[g] = fSlot[r]!;
        postTf[g] = fTf[r]!;
        postOther[g] = fOther[r]!;
        rowOf[g] = r;
      }
    });
    const positions = new Uint16Array(fPosStart[rows]!);
    const skip = new Int32Array(Math.ceil(rows / SKIP) + 1);
    let at = 0;
    await sliced(rows, (from, to) => {
      for (let g = from; g < to; g++) {
        if (g % SKIP === 0) skip[g / SKIP] = at;
        const r = rowOf[g]!;
        const end = fPosStart[r + 1]!;
        for (let k = fPosStart[r]!; k < end; k++) positions[at++] = fPos[k]!;
      }
    });
    const sorted = [...this.lexemes].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return new EntryIndex(
      plusId,
      version,
      tokens,
      this.files,
      this.chunkId.done(),
      this.fileSlot.done(),
      this.tokenSize.done(),
      this.lexId,
      sorted,
      postStart,
      postSlot,
      postTf,
      postOther,
      skip,
      positions,
    );
  }
}
