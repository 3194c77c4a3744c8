/**
 * One entry's postings and the search over them: a step's candidates with their features, as
 * featuresSql (retrieval/search-sql.ts) reads them (the scorer is retrieval/score.ts).
 */
import type { ScoredChunk } from '../repo.js';
import { NEAR_HIT, PHRASE, type Features } from '../score.js';
import { NEAR } from '../scoring.js';
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
   * The chunks of one step of a term choice (those matching its tsquery), each handed to `visit`
   * with its features — what featuresSql (retrieval/search-sql.ts) reads for it. `visit` gets the
   * same object every time (copy what it keeps).
   */
  candidates(choice: TermChoice, step: Step, visit: (f: Features, slot: number) => void): void {
    const rankLex = choice.rank.map((lexeme) => this.lexId.get(lexeme) ?? -1);
    const indexOf = new Map(choice.rank.map((l, i) => [l, i]));
    const clause = (c: string[]) => c.map((l) => indexOf.get(l) ?? -1);
    const clauses = step.clauses.map(clause);
    const excluded = step.excluded.map(clause);
    const pairs = choice.pairs.map((p) => ({ a: indexOf.get(p.a) ?? -1, b: indexOf.get(p.b) ?? -1, d: Math.max(1, p.distance) }));
    const g = new Int32Array(rankLex.length);
    const holds = (c: number[]) => c.every((i) => i >= 0 && g[i]! >= 0);
    const f: Features = {
      chunkId: 0,
      fileId: '',
      plusId: this.plusId,
      tokenSize: 0,
      fileTokens: 0,
      tf: rankLex.map(() => 0),
      headings: 0,
      pairs: pairs.map(() => 0),
    };
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
        const file = this.files[this.fileSlot[slot]!]!;
        f.chunkId = this.chunkId[slot]!;
        f.fileId = file.id;
        f.tokenSize = this.tokenSize[slot]!;
        f.fileTokens = file.tokens;
        f.headings = 0;
        for (let i = 0; i < rankLex.length; i++) {
          const gi = g[i]!;
          f.tf[i] = gi < 0 ? 0 : this.postTf[gi]!;
          if (gi >= 0 && (this.postOther[gi]! & 0x8000) !== 0) f.headings |= 1 << i;
        }
        for (let k = 0; k < pairs.length; k++) {
          const p = pairs[k]!;
          const ga = p.a < 0 ? -1 : g[p.a]!;
          const gb = p.b < 0 ? -1 : g[p.b]!;
          f.pairs[k] = ga < 0 || gb < 0 ? 0 : this.apart(ga, gb, p.d, false) ? PHRASE : this.apart(ga, gb, 0, true) ? NEAR_HIT : 0;
        }
        visit(f, slot);
      }
    }
  }

  /** Its chunk in `slot` as a ScoredChunk, without its text and headings (`hydrate` reads them). */
  chunk(slot: number, score: number): ScoredChunk {
    const file = this.files[this.fileSlot[slot]!]!;
    return {
      chunkId: this.chunkId[slot]!,
      fileId: file.id,
      filename: file.filename,
      plusId: this.plusId,
      heading: null,
      text: null,
      tokenSize: this.tokenSize[slot]!,
      score,
      rank: 0,
      ranking: { lexical: null, vector: null },
    };
  }
}
