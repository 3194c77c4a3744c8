/**
 * An in-memory lexical index of Plus entries: the same ranking as searchSql (repo.ts) — the same
 * candidates, BM25 scores to the last bit, boosts, ties and order — computed from postings held
 * in this process instead of by the database over the tsvector column.
 *
 * Why: on the embedded database every search step is planned and run in WebAssembly over every
 * candidate row (~10 ms p50 at 100k chunks); here a question costs one small statement (the
 * entry, with the question's lexemes) and one read of the texts actually used.
 *
 * The database stays the only truth. An index is built from plus_chunks.search (the stored
 * tsvectors) at the entry's `lexical_version`, which the database raises with every statement
 * that inserts or deletes the entry's chunks (migration 0013); a search uses the index only when
 * the version it read with the entry is the index's, and the SQL ranking otherwise (and rebuilds
 * the index in the background). So no write path, cascade or other node can leave it answering
 * from stale chunks. docs/DECISIONS.md, "In-memory lexical index".
 */
import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { PREFIX_MIN_CHARS, type ScoredChunk } from './repo.js';
import { BM25, BOOSTS, NEAR, TIE_DECIMALS } from './scoring.js';
import type { Step, TermChoice, TermStat } from './query.js';

/** One of a question's lexemes as the database found it (to_tsvector), with its first position and whether it was carried. */
export interface QuestionLexeme {
  lexeme: string;
  pos: number | null;
  carried: boolean;
}

/**
 * A question's lexemes from its tsvector in text form (`to_tsvector('english', q)::text`), each
 * with its first position — what questionLexemesSql gives, read without json_agg (which costs
 * PGlite more than the rest of the statement).
 */
export function lexemesOfVector(vector: string): QuestionLexeme[] {
  const out: QuestionLexeme[] = [];
  for (const m of vector.matchAll(/'((?:[^'\\]|''|\\.)*)'(?::(\d+))?/g)) {
    out.push({ lexeme: m[1]!.replace(/''/g, "'").replace(/\\(.)/g, '$1'), pos: m[2] === undefined ? null : Number(m[2]), carried: false });
  }
  return out;
}

/** A file of an indexed entry (file names never change). */
interface IndexedFile {
  id: string;
  filename: string;
}

/** Growable typed arrays for building. */
class Grow<T extends Int32Array | Uint16Array | Float64Array> {
  length = 0;
  constructor(
    public a: T,
    private readonly make: (n: number) => T,
  ) {}
  push(v: number): void {
    if (this.length === this.a.length) {
      const b = this.make(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = v;
  }
  done(): T {
    return this.a.slice(0, this.length) as T;
  }
}

const SKIP = 32;
/** Weight bits of a tsvector position (WordEntryPos): A is 3, D (the default, no letter) 0. */
const WEIGHT_A = 3;

/**
 * Lexemes of chunks as they are added, in chunk order; `seal` turns them into postings.
 * A tsvector's text form is `'lexeme':1,5A 'other':2` (quote and backslash doubled in lexemes).
 */
export class IndexBuilder {
  private readonly lexId = new Map<string, number>();
  private readonly lexemes: string[] = [];
  private readonly chunkId = new Grow(new Float64Array(1024), (n) => new Float64Array(n));
  private readonly fileSlot = new Grow(new Int32Array(1024), (n) => new Int32Array(n));
  private readonly tokenSize = new Grow(new Int32Array(1024), (n) => new Int32Array(n));
  // one row per (chunk, lexeme): lexeme id, chunk slot, body tf, other positions | heading bit, and its positions
  private readonly fLex = new Grow(new Int32Array(1 << 16), (n) => new Int32Array(n));
  private readonly fSlot = new Grow(new Int32Array(1 << 16), (n) => new Int32Array(n));
  private readonly fTf = new Grow(new Uint16Array(1 << 16), (n) => new Uint16Array(n));
  private readonly fOther = new Grow(new Uint16Array(1 << 16), (n) => new Uint16Array(n));
  private readonly fPos = new Grow(new Uint16Array(1 << 16), (n) => new Uint16Array(n));
  private readonly fileSlots = new Map<string, number>();
  readonly files: IndexedFile[] = [];

  addFile(id: string, filename: string): void {
    if (this.fileSlots.has(id)) return;
    this.fileSlots.set(id, this.files.length);
    this.files.push({ id, filename });
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

  /** The postings: each lexeme's chunks in chunk order (a counting sort of what was added). */
  seal(plusId: string, version: number, tokens: number): EntryIndex {
    const nLex = this.lexemes.length;
    const rows = this.fLex.length;
    const fLex = this.fLex.a;
    const postStart = new Int32Array(nLex + 1);
    for (let r = 0; r < rows; r++) postStart[fLex[r]! + 1]!++;
    for (let l = 0; l < nLex; l++) postStart[l + 1]! += postStart[l]!;
    // where each row's positions start among the added ones
    const fPosStart = new Int32Array(rows + 1);
    for (let r = 0; r < rows; r++) fPosStart[r + 1] = fPosStart[r]! + this.fTf.a[r]! + (this.fOther.a[r]! & 0x7fff);
    const cursor = postStart.slice(0, nLex);
    const postSlot = new Int32Array(rows);
    const postTf = new Uint16Array(rows);
    const postOther = new Uint16Array(rows);
    const rowOf = new Int32Array(rows);
    for (let r = 0; r < rows; r++) {
      const g = cursor[fLex[r]!]!++;
      postSlot[g] = this.fSlot.a[r]!;
      postTf[g] = this.fTf.a[r]!;
      postOther[g] = this.fOther.a[r]!;
      rowOf[g] = r;
    }
    const positions = new Uint16Array(fPosStart[rows]!);
    const fPos = this.fPos.a;
    const skip = new Int32Array(Math.ceil(rows / SKIP) + 1);
    let at = 0;
    for (let g = 0; g < rows; g++) {
      if (g % SKIP === 0) skip[g / SKIP] = at;
      const r = rowOf[g]!;
      const to = fPosStart[r + 1]!;
      for (let k = fPosStart[r]!; k < to; k++) positions[at++] = fPos[k]!;
    }
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
   * searchSql computes for each chunk matching the step's tsquery. `idf` and `avgLen` are the
   * scope's (several entries may be searched together).
   */
  candidates(choice: TermChoice, step: Step, avgLen: number, out: Hit[]): void {
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

/**
 * round(x::numeric, TIE_DECIMALS) × 10^TIE_DECIMALS, as PostgreSQL computes it: float8 → numeric
 * keeps 15 significant digits, then round() goes half away from zero.
 */
export function tieKey(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return 0;
  // Far from a rounding boundary the 15-digit conversion cannot change the result (it moves
  // x by < 1e-12 for the scores there are, < 0.01 once scaled): round directly.
  const scaled = x * 10 ** TIE_DECIMALS;
  if (Math.abs(scaled) < 2 ** 50) {
    const frac = Math.abs(scaled) % 1;
    if (Math.abs(frac - 0.5) > 0.01 && Math.abs(x) < 1e4) return Math.sign(x) * Math.round(Math.abs(scaled));
  }
  const neg = x < 0;
  const [mant, exp = '0'] = Math.abs(x).toPrecision(15).split('e');
  const [int, frac = ''] = mant!.split('.');
  const digits = int! + frac;
  const point = int!.length + Number(exp); // digits before the decimal point
  const keep = point + TIE_DECIMALS; // digits kept
  if (keep < 0) return 0;
  const kept = digits.padEnd(keep + 1, '0');
  let v = keep === 0 ? 0 : Number(kept.slice(0, keep));
  if (kept.charCodeAt(keep) >= 53) v += 1;
  return neg ? -v : v;
}

/**
 * The best `limit` hits of several entries' candidates, in searchSql's order: score (as rounded:
 * tieKey) descending, then diversity (a file's n-th best after every file's (n−1)-th), the shorter
 * chunk, the chunk id. One sort by score gives every hit its place in its file; rounding keeps
 * that order, so only the first `limit` and the hits tied with the last of them are rounded and
 * sorted again.
 */
export function orderHits(hits: Hit[], limit: number): Hit[] {
  hits.sort((a, b) => b.score - a.score || a.tokenSize - b.tokenSize || a.chunkId - b.chunkId);
  const counts = new Map<EntryIndex, Int32Array>();
  for (const h of hits) {
    let perFile = counts.get(h.index);
    if (!perFile) counts.set(h.index, (perFile = new Int32Array(h.index.files.length)));
    h.inFile = ++perFile[h.file]!;
  }
  let end = Math.min(limit, hits.length);
  if (end === 0) return [];
  const last = tieKey(hits[end - 1]!.score);
  while (end < hits.length && tieKey(hits[end]!.score) === last) end++;
  const top = hits.slice(0, end).map((h) => ({ h, key: tieKey(h.score) }));
  top.sort((a, b) => b.key - a.key || a.h.inFile - b.h.inFile || a.h.tokenSize - b.h.tokenSize || a.h.chunkId - b.h.chunkId);
  return top.slice(0, limit).map((t) => t.h);
}

/**
 * The question's term statistics over several entries' indexes, as termStatsSql computes them
 * over plus_terms: each lexeme the entries hold with its df summed over them; a lexeme none holds,
 * of at least PREFIX_MIN_CHARS letters a–z, stands for their commonest lexeme beginning with all
 * of it but its last letter (ties: the first in byte order).
 */
export function indexTermStats(parts: readonly EntryIndex[], lexemes: readonly QuestionLexeme[]): TermStat[] {
  const rows = new Map<string, { direct: number | null; prefix: number; pos: number | null; carried: boolean }>();
  const add = (lexeme: string, df: number, prefix: boolean, q: QuestionLexeme) => {
    const r = rows.get(lexeme) ?? { direct: null, prefix: 0, pos: null, carried: true };
    if (prefix) r.prefix = Math.max(r.prefix, df);
    else r.direct = (r.direct ?? 0) + df;
    if (q.pos !== null) r.pos = r.pos === null ? q.pos : Math.min(r.pos, q.pos);
    r.carried &&= q.carried;
    rows.set(lexeme, r);
  };
  for (const q of lexemes) {
    const df = parts.reduce((n, p) => n + p.df(q.lexeme), 0);
    if (df > 0) add(q.lexeme, df, false, q);
    else if (q.lexeme.length >= PREFIX_MIN_CHARS && /^[a-z]+$/.test(q.lexeme)) {
      const found = new Map<string, number>();
      for (const p of parts) for (const [l, n] of p.withPrefix(q.lexeme.slice(0, -1))) found.set(l, (found.get(l) ?? 0) + n);
      let best: [string, number] | null = null;
      for (const [l, n] of found) if (!best || n > best[1] || (n === best[1] && l < best[0])) best = [l, n];
      if (best) add(best[0], best[1], true, q);
    }
  }
  return [...rows].map(([lexeme, r]) => ({
    lexeme,
    df: r.direct ?? r.prefix,
    ...(r.pos === null ? {} : { pos: r.pos }),
    ...(r.carried ? { carried: true } : {}),
  }));
}

// ---- building from the database ------------------------------------------------------------

/** Chunks read per statement while building (other queries run between them). */
const BUILD_BATCH = 2000;

/**
 * Build an entry's index from the database. `unusable` at a version: the entry holds more than
 * `maxChunks` chunks, or not as many as its chunk_count says (written other than by PlusRepo):
 * not tried again until the entry changes. Null: the entry is gone, changed while it was read
 * (its lexical_version moved: read again later), or the build was stopped.
 */
export async function buildEntryIndex(
  db: Executor,
  plusId: string,
  maxChunks: number,
  stopped: () => boolean = () => false,
): Promise<EntryIndex | { unusable: number } | null> {
  type Head = { version: number | string; chunk_count: number; tokens: number | string };
  const head = async () =>
    (
      (await db.execute(sql`
      select e.lexical_version as version, e.chunk_count, (select coalesce(sum(f.token_size), 0) from plus_files f where f.plus_id = e.id)::float8 as tokens
      from plus_entries e where e.id = ${plusId}::uuid`)) as unknown as { rows: Head[] }
    ).rows[0];
  const before = await head();
  if (!before) return null;
  if (before.chunk_count > maxChunks) return { unusable: Number(before.version) };
  const builder = new IndexBuilder();
  const files = (await db.execute(sql`select f.id, f.filename from plus_files f where f.plus_id = ${plusId}::uuid`)) as unknown as {
    rows: Array<{ id: string; filename: string }>;
  };
  for (const f of files.rows) builder.addFile(f.id, f.filename);
  let last = 0;
  for (;;) {
    if (stopped()) return null;
    const res = (await db.execute(sql`
      select c.id, c.file_id, c.token_size, c.search::text as search
      from plus_chunks c where c.plus_id = ${plusId}::uuid and c.id > ${last}
      order by c.id limit ${BUILD_BATCH}`)) as unknown as { rows: Array<{ id: number | string; file_id: string; token_size: number; search: string | null }> };
    // a chunk of a file added since the files were read: the entry changed, read it again later
    for (const r of res.rows) if (!builder.addChunk(Number(r.id), r.file_id, r.token_size, r.search ?? '')) return null;
    if (res.rows.length < BUILD_BATCH) break;
    last = Number(res.rows[res.rows.length - 1]!.id);
    if (builder.chunks > maxChunks) return { unusable: Number(before.version) };
  }
  const after = await head();
  if (!after || Number(after.version) !== Number(before.version)) return null;
  if (builder.chunks !== after.chunk_count) return { unusable: Number(before.version) };
  return builder.seal(plusId, Number(before.version), Number(before.tokens));
}

export interface IndexStats {
  entries: number;
  chunks: number;
  bytes: number;
  building: number;
}

/**
 * The indexes of the entries searched lately, at most `maxChunks` chunks in all (the least
 * recently searched go first; an entry larger than that is searched by SQL). Built one at a time
 * in the background, when a search finds none current for its entry: that search, and those
 * until the build is done, rank in SQL.
 */
export class LexicalIndexes {
  private readonly ready = new Map<string, EntryIndex>();
  /** entries that could not be indexed at that version (buildEntryIndex) */
  private readonly unusable = new Map<string, number>();
  private readonly queue = new Set<string>();
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly db: Executor,
    private readonly maxChunks: number,
    private readonly onError: (err: unknown, plusId: string) => void = () => {},
  ) {}

  /** Whether the entry has an index (at some version): a search reads the entry's version, then asks `current`. */
  has(plusId: string): boolean {
    return this.ready.has(plusId);
  }

  /**
   * The entry's index if it was built at `version` of the entry; otherwise undefined, an older
   * index is dropped, and (unless the entry is too large) a build is queued.
   */
  current(plusId: string, version: number): EntryIndex | undefined {
    const idx = this.ready.get(plusId);
    if (idx && idx.version === version) {
      this.ready.delete(plusId);
      this.ready.set(plusId, idx); // most recently used last
      return idx;
    }
    if (idx) this.ready.delete(plusId);
    if (this.unusable.get(plusId) !== version && !this.closed) {
      this.queue.add(plusId);
      this.running ??= this.drain();
    }
    return undefined;
  }

  /** Resolves when no build is queued or running (tests, benchmarks, warm-up). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stats(): IndexStats {
    let chunks = 0;
    let bytes = 0;
    for (const i of this.ready.values()) {
      chunks += i.chunks;
      bytes += i.bytes;
    }
    return { entries: this.ready.size, chunks, bytes, building: this.queue.size + (this.running ? 1 : 0) };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    await this.idle();
    this.ready.clear();
  }

  private async drain(): Promise<void> {
    try {
      for (const plusId of this.queue) {
        this.queue.delete(plusId);
        if (this.closed) break;
        try {
          const built = await buildEntryIndex(this.db, plusId, this.maxChunks, () => this.closed);
          if (built instanceof EntryIndex) this.add(built);
          else if (built) this.unusable.set(plusId, built.unusable);
        } catch (err) {
          if (!this.closed) this.onError(err, plusId);
        }
      }
    } finally {
      this.running = null;
    }
  }

  private add(idx: EntryIndex): void {
    this.ready.delete(idx.plusId);
    this.unusable.delete(idx.plusId);
    let chunks = idx.chunks;
    for (const i of this.ready.values()) chunks += i.chunks;
    for (const [id, i] of this.ready) {
      if (chunks <= this.maxChunks) break;
      this.ready.delete(id);
      chunks -= i.chunks;
    }
    this.ready.set(idx.plusId, idx);
  }
}
