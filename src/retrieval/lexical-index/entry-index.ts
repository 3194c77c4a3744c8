/**
 * One entry's postings and the search over them: a step's candidates scored exactly as searchSql
 * (retrieval/search-sql.ts) scores them.
 */
import type { ScoredChunk } from '../repo.js';
import { BM25, BOOSTS, FILE_PRIOR, NEAR } from '../scoring.js';
import type { Step, TermChoice } from '../query.js';

/** A file of an indexed entry (file names never change). */
export interface IndexedFile {
  id: string;
  filename: string;
  /** its tokens (plus_files.token_size: the file-length prior, FILE_PRIOR) */
  tokens: number;
}

/** Postings per skip offset (where a posting's positions start is found from the last one). */
export const SKIP = 32;

/** One entry's postings, built at one lexical_version of it. */
export class EntryIndex {
  /** per chunk slot: the last query that reached it (candidates counted once) */
  private readonly stamp: Int32Array;
  private query = 0;

  constructor(
    readonly plusId: string,
    readonly version: number,
    /** the entry's files' tokens (retrieval's average chunk length, as termStatsSql sums them) */
    readonly tokens: number,
    readonly files: readonly IndexedFile[],
    private readonly chunkId: Float64Array,
    private readonly fileSlot: Int32Array,
    private readonly tokenSize: Int32Array,
    private readonly lexId: Map<string, number>,
    private readonly sortedLexemes: string[],
    private readonly postStart: Int32Array,
    private readonly postSlot: Int32Array,
    private readonly postTf: Uint16Array,
    private readonly postOther: Uint16Array,
    private readonly skip: Int32Array,
    private readonly positions: Uint16Array,
  ) {
    this.stamp = new Int32Array(chunkId.length);
  }

  get chunks(): number {
    return this.chunkId.length;
  }

  /** What its arrays hold, in bytes (the Map of lexemes counted roughly). */
  get bytes(): number {
    const arrays = [
      this.chunkId,
      this.fileSlot,
      this.tokenSize,
      this.postStart,
      this.postSlot,
      this.postTf,
      this.postOther,
      this.skip,
      this.positions,
      this.stamp,
    ];
    return arrays.reduce((n, a) => n + a.byteLength, 0) + this.sortedLexemes.length * 80;
  }

  /** Chunks holding the lexeme (0: none). */
  df(lexeme: string): number {
    const l = this.lexId.get(lexeme);
    return l === undefined ? 0 : this.postStart[l + 1]! - this.postStart[l]!;
  }

  /** The lexemes that begin with `prefix`, with their df. */
  withPrefix(prefix: string): Array<[string, number]> {
    const lex = this.sortedLexemes;
    let lo = 0;
    let hi = lex.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (lex[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: Array<[string, number]> = [];
    for (let i = lo; i < lex.length && lex[i]!.startsWith(prefix); i++) out.push([lex[i]!, this.df(lex[i]!)]);
    return out;
  }

  /** The first posting in [from, end) of one lexeme's list whose chunk is not before `slot` (galloping: lists are in chunk order). */
  private seek(from: number, end: number, slot: number): number {
    const ps = this.postSlot;
    if (from >= end || ps[from]! >= slot) return from;
    let lo = from; // ps[lo] < slot
    let step = 1;
    let hi = from + 1;
    while (hi < end && ps[hi]! < slot) {
      lo = hi;
      step *= 2;
      hi = lo + step;
    }
    if (hi > end) hi = end;
    // ps[lo] < slot; hi is end or ps[hi] >= slot
    while (lo + 1 < hi) {
      const mid = (lo + hi) >>> 1;
      if (ps[mid]! < slot) lo = mid;
      else hi = mid;
    }
    return hi;
  }

  /** Where posting `g`'s positions start in `positions`. */
  private positionsAt(g: number): number {
    const block = (g / SKIP) | 0;
    let at = this.skip[block]!;
    for (let h = block * SKIP; h < g; h++) at += this.postTf[h]! + (this.postOther[h]! & 0x7fff);
    return at;
  }

  private positionCount(g: number): number {
    return this.postTf[g]! + (this.postOther[g]! & 0x7fff);
  }

  /** Whether some position of posting `gb` is `d` after one of `ga` — or, `near`, 1..NEAR before or after one. */
  private apart(ga: number, gb: number, d: number, near: boolean): boolean {
    const a0 = this.positionsAt(ga);
    const a1 = a0 + this.positionCount(ga);
    const b0 = this.positionsAt(gb);
    const b1 = b0 + this.positionCount(gb);
    const p = this.positions;
    // both lists ascend: for each of a's positions, b's first position not before the window
    let j = b0;
    for (let i = a0; i < a1; i++) {
      const lo = near ? p[i]! - NEAR : p[i]! + d;
      const hi = near ? p[i]! + NEAR : p[i]! + d;
      while (j < b1 && p[j]! < lo) j++;
      for (let k = j; k < b1 && p[k]! <= hi; k++) if (p[k] !== p[i]) return true;
    }
    return false;
  }

  /**
   * The chunks of one step of a term choice with their scores (unordered) — exactly what
   * searchSql computes for each chunk matching the step's tsquery. `idf`, `avgLen` and `avgFile`
   * are the scope's (several entries may be searched together).
   */
  candidates(choice: TermChoice, step: Step, avgLen: number, avgFile: number, out: Hit[]): void {
    const { k1, b } = BM25;
    const rankLex = choice.rank.map((lexeme) => this.lexId.get(lexeme) ?? -1);
    const indexOf = new Map(choice.rank.map((l, i) => [l, i]));
    const clause = (c: string[]) => c.map((l) => indexOf.get(l) ?? -1);
    const clauses = step.clauses.map(clause);
    const excluded = step.excluded.map(clause);
    const pairs = choice.pairs.map((p) => ({ a: indexOf.get(p.a) ?? -1, b: indexOf.get(p.b) ?? -1, d: Math.max(1, p.distance), idf: p.idf }));
    const g = new Int32Array(rankLex.length);
    const holds = (c: number[]) => c.every((i) => i >= 0 && g[i]! >= 0);
    const q = ++this.query;
    for (const c of clauses) {
      if (c.some((i) => i < 0 || rankLex[i]! < 0)) continue; // a lexeme the entry does not hold
      // the clause's chunks: its rarest lexeme's, each looked up in the others' lists (all in chunk order)
      const lists = c.map((i) => rankLex[i]!).sort((x, y) => this.postStart[x + 1]! - this.postStart[x]! - (this.postStart[y + 1]! - this.postStart[y]!));
      const walk = lists[0]!;
      const at = lists.map((l) => this.postStart[l]!);
      // every ranking lexeme's list is walked forward with the clause's chunks (they ascend)
      const cur = rankLex.map((l) => (l < 0 ? 0 : this.postStart[l]!));
      chunks: for (let w = this.postStart[walk]!; w < this.postStart[walk + 1]!; w++) {
        const slot = this.postSlot[w]!;
        if (this.stamp[slot] === q) continue;
        for (let k = 1; k < lists.length; k++) {
          const end = this.postStart[lists[k]! + 1]!;
          const p = (at[k] = this.seek(at[k]!, end, slot));
          if (p === end) break chunks; // that list has no more chunks: nor has the clause
          if (this.postSlot[p] !== slot) continue chunks;
        }
        this.stamp[slot] = q;
        for (let i = 0; i < rankLex.length; i++) {
          const l = rankLex[i]!;
          if (l < 0) g[i] = -1;
          else {
            const end = this.postStart[l + 1]!;
            const p = (cur[i] = this.seek(cur[i]!, end, slot));
            g[i] = p < end && this.postSlot[p] === slot ? p : -1;
          }
        }
        if (excluded.some(holds)) continue;
        const len = this.tokenSize[slot]!;
        const norm = avgLen > 0 ? k1 * (1 - b + (b * len) / avgLen) : k1;
        // the same float8 operations in the same order as searchSql
        let score = 0;
        for (let i = 0; i < rankLex.length; i++) {
          const gi = g[i]!;
          const tf = gi < 0 ? 0 : this.postTf[gi]!;
          const heading = gi >= 0 && (this.postOther[gi]! & 0x8000) !== 0 ? BOOSTS.heading : 0;
          const term = choice.idf[i]! * ((tf * (k1 + 1)) / (tf + norm) + heading);
          score = i === 0 ? term : score + term;
        }
        for (const p of pairs) {
          const ga = p.a < 0 ? -1 : g[p.a]!;
          const gb = p.b < 0 ? -1 : g[p.b]!;
          const boost = ga < 0 || gb < 0 ? 0 : this.apart(ga, gb, p.d, false) ? BOOSTS.phrase : this.apart(ga, gb, 0, true) ? BOOSTS.near : 0;
          score = score + p.idf * boost;
        }
        if (avgFile > 0) score = score / (1 + FILE_PRIOR * Math.max(0, Math.sqrt(this.files[this.fileSlot[slot]!]!.tokens / avgFile) - 1));
        out.push({ index: this, slot, score, tokenSize: len, chunkId: this.chunkId[slot]!, file: this.fileSlot[slot]!, inFile: 0 });
      }
    }
  }

  /** A hit as a ScoredChunk without its text and headings (`hydrate` reads them). */
  chunk(h: Hit): ScoredChunk {
    const file = this.files[h.file]!;
    return {
      chunkId: h.chunkId,
      fileId: file.id,
      filename: file.filename,
      plusId: this.plusId,
      heading: null,
      text: null,
      tokenSize: h.tokenSize,
      score: h.score,
      rank: 0,
      ranking: { lexical: null, vector: null },
    };
  }
}

export interface Hit {
  index: EntryIndex;
  slot: number;
  score: number;
  tokenSize: number;
  chunkId: number;
  file: number;
  /** 1 + how many chunks of the same file rank before it */
  inFile: number;
}
